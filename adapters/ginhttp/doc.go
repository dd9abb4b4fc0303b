// Package ginhttp is cachegate's driving HTTP adapter, built on Gin.
//
// It owns the routes of CONTRACT.md sections 2 to 5 that concern the cache
// and the service's health, the one table mapping domain error kinds to
// HTTP statuses, a strict JSON decoder and an allocation-light entry
// encoder, and the scaffolding of the token guard. Gin stays inside this
// package: nothing exported mentions a Gin type, and integrators register
// their own routes as plain http.Handlers (see Server.Handle).
//
// Middleware runs in this order on every request: request id, recovery,
// access log, body limit; then, per route, the guard; then the handler.
// Handlers only decode a DTO, convert it to a use-case input, call the use
// case and convert its result: no business rule lives here.
package ginhttp
