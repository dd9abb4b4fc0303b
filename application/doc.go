// Package application holds cachegate's use cases: the cache operations of
// the Go API (docs/api.md, "The Go API") and of the HTTP routes, login,
// refresh, logout, authentication of bearer tokens and administration.
//
// Use cases depend on package ports only. Each is a struct whose fields are
// the ports it needs, built by a plain constructor, with one Execute method
// taking ctx and an input struct. The caller's identity travels in the
// input as a domain.Actor; it is never read from the context.
package application
