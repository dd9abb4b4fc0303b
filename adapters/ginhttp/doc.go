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
// Decisions where the contract is silent are written in docs/api.md
// ("Conventions", "Cache entries", "Conditional requests", "Listing: the
// query language"); besides:
//
//   - A non-empty body without a Content-Type, or with two, is 415.
//     Bodies must be UTF-8 and nest at most 256 levels deep. key and type
//     may not contain U+0000, which no store can keep.
//   - An assignment is reachable over HTTP by its name only, not by its
//     entity key; an unknown one is 404 CACHE_ASSIGNMENT_NOT_FOUND, before
//     any authentication.
package ginhttp
