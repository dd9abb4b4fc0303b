package application

import "context"

// SessionRevocations is what the authentication use cases need of the
// set of revoked sessions (refresh families) that a background process
// keeps polled, background.RevokedSessions (ARCHITECTURE.md, "Who owns
// what"): application declares it, the process implements it, so
// application never imports the process's package.
//
// A nil SessionRevocations checks nothing and remembers nothing.
type SessionRevocations interface {
	// Revoked reports whether family was revoked, by any process.
	Revoked(ctx context.Context, family string) bool
	// Add marks family revoked in this process at once.
	Add(family string)
}
