// Package background holds cachegate's long-running processes: the
// Sweeper (dead rows removed in bounded batches), and the loops that
// serve the use cases of package application from behind the small
// interfaces application declares for them: the change Feed
// (application.ChangeFeed, for WatchCaches) and RevokedSessions
// (application.SessionRevocations, for Authenticate and the session
// use cases) (ARCHITECTURE.md, "Who owns
// what"). It is part of the core: it imports domain, ports and
// application, never an adapter nor a third-party package; application
// never imports it, so bootstrap (or an embedder) starts each process and
// hands it to the use cases that need it.
package background
