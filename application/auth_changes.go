package application

import "sync"

// AuthChanges tells the holders of long-lived authorisations (event
// streams) that something an access token's validity depends on may have
// changed in this process: a session (refresh family) was revoked, by
// this process or as seen by the revoked-sessions poll, or a signing key
// was revoked (the key ring's reload). It carries no detail: a holder
// re-checks its principal with Authenticate.Recheck, in memory, so a
// change costs each open stream a few map lookups and no query
// (ARCHITECTURE.md, "The change feed", Ends).
//
// It is one channel, closed and replaced on each change: any number of
// waiters select on it without registering, so an idle stream holds
// nothing for it but the channel it waits on. Safe for concurrent use; a
// nil *AuthChanges never changes.
type AuthChanges struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewAuthChanges returns a broadcaster that has not changed yet.
func NewAuthChanges() *AuthChanges { return &AuthChanges{ch: make(chan struct{})} }

// Changed returns a channel closed at the next change. Take it before
// checking, then wait on it: a change made while checking is not missed.
func (a *AuthChanges) Changed() <-chan struct{} {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ch
}

// Bump signals a change to every waiter.
func (a *AuthChanges) Bump() {
	if a == nil {
		return
	}
	a.mu.Lock()
	close(a.ch)
	a.ch = make(chan struct{})
	a.mu.Unlock()
}
