// Package ginhttp is cachegate's driving HTTP adapter, built on Gin.
//
// It is built of rooms, one per concern, each mounting its routes with
// one call from New:
//
//   - this package: the Server, its middleware and guard, the health
//     routes, the OpenAPI document and metrics; the cache API (the
//     routes of docs/api.md, "Routes", under /cache: cache_*.go,
//     list_*.go, event_*.go) and the authentication routes
//     (auth_routes.go);
//   - admin: the admin API, self-service and the first admin's set-up
//     (docs/admin.md);
//   - limits: what one caller may hold at once and its budget of
//     database time;
//   - console: the web console's files;
//   - internal/web: what every room shares: the one table mapping domain
//     error kinds to HTTP statuses and the error envelope, the strict
//     JSON decoder built from the request types, the encoding helpers,
//     the caller of a request and the Router the rooms mount on.
//
// Gin stays inside the adapter: nothing exported mentions a Gin type, and
// integrators register their own routes as plain http.Handlers (see
// Server.Handle), read the caller with CurrentUser and answer errors with
// Server.WriteError.
//
// Middleware runs in this order on every request: request id, recovery,
// access log, body limit; then, per route, the guard; then the handler.
// Handlers only decode a DTO, convert it to a use-case input, call the use
// case and convert its result: no business rule lives here.
//
// Decisions where the contract is silent:
//
//   - A body must be sent as application/json (any case, parameters
//     allowed, charset only UTF-8); a non-empty body without a
//     Content-Type, or with two, is 415. Bodies must be UTF-8 and nest at
//     most 256 levels deep.
//   - data: null counts as missing (400): a cache entry holds a value.
//     key and type may not contain U+0000, which no store can keep.
//   - POST answers 201 with a Location header; DELETE answers 200 with the
//     entry as deleted (dateDeleted set). Every answer carrying an entry
//     has ETag: "<version>"; GET by id answers 304 to a matching
//     If-None-Match.
//   - If-Match and If-None-Match: docs/api.md, "Conditional requests".
//   - Lists: unknown query parameters are 400 (a typo must not widen a
//     query); contradictory filters match nothing (docs/api.md, "Listing:
//     the query language").
//   - An assignment is reachable over HTTP by its name only, not by its
//     entity key; an unknown one is 404 CACHE_ASSIGNMENT_NOT_FOUND, before
//     any authentication.
//   - Trailing slashes are not redirected: /cache/user/ is 404.
package ginhttp
