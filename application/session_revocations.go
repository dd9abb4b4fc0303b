package application

import "context"

// SessionRevocations is what the authentication use cases need of the
// set of revoked sessions (refresh families) that background.RevokedSessions
// keeps polled (ARCHITECTURE.md, "Who owns what"). A nil
// SessionRevocations checks nothing and remembers nothing.
type SessionRevocations interface {
	// Revoked reports whether family was revoked, by any process.
	Revoked(ctx context.Context, family string) bool
	// Add marks family revoked in this process at once.
	Add(family string)
}

// revokedHere tells r, when set, of families this process just revoked.
func revokedHere(r SessionRevocations, families ...string) {
	for _, f := range families {
		if r != nil {
			r.Add(f)
		}
	}
}
