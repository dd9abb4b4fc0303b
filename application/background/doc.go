// Package background holds cachegate's long-running processes: the
// Sweeper, and the loops that serve package application from behind the
// interfaces it declares for them: the change Feed (application.ChangeFeed)
// and RevokedSessions (application.SessionRevocations). It imports domain,
// ports and application only; application never imports it, so bootstrap
// (or an embedder) starts each process and hands it to the use cases
// (ARCHITECTURE.md, "Who owns what").
package background
