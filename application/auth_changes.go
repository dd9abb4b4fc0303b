package application

import (
	"sync"
	"time"
)

// AuthChangesGap is the shortest interval between two signals of
// AuthChanges: bumps closer together are signalled once, at the end of
// the interval. Each signal wakes every open stream (docs/benchmarks.md,
// "Streams end with their session"), so a burst of logouts costs at most
// four wake-ups a second, and a stream still ends well within a second
// of its process learning of the change (README.md, "Change feed").
const AuthChangesGap = 250 * time.Millisecond

// AuthChanges tells the holders of long-lived authorisations (event
// streams) that something an access token's validity depends on may have
// changed in this process: a session (refresh family) was revoked, by
// this process or as seen by the revoked-sessions poll, or a signing key
// was revoked (the key ring's reload). It carries no detail: a holder
// re-checks its principal with Authenticate.Recheck, in memory, so a
// change costs each open stream a few map lookups and no query
// (ARCHITECTURE.md, "The change feed", Ends).
//
// It is one channel, closed and replaced on each signal: any number of
// waiters select on it without registering, so an idle stream holds
// nothing for it but the channel it waits on. Safe for concurrent use; a
// nil *AuthChanges never changes.
type AuthChanges struct {
	mu sync.Mutex
	ch chan struct{}
	// last is when the channel was last closed; pending is set while a
	// signal waits for the end of AuthChangesGap.
	last    time.Time
	pending bool
}

// NewAuthChanges returns a broadcaster that has not changed yet.
func NewAuthChanges() *AuthChanges { return &AuthChanges{ch: make(chan struct{})} }

// Changed returns a channel closed at the next signal. Take it before
// checking, then wait on it: a change made while checking is not missed.
func (a *AuthChanges) Changed() <-chan struct{} {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ch
}

// Bump signals a change to every waiter: at once, or, within
// AuthChangesGap of the previous signal, at the end of that interval
// (one signal for every bump until then). It never blocks. The interval
// is measured on the process's monotonic clock: it paces wake-ups and
// decides nothing about any token.
func (a *AuthChanges) Bump() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending {
		return
	}
	wait := AuthChangesGap - time.Since(a.last)
	if a.last.IsZero() || wait <= 0 {
		a.signalLocked()
		return
	}
	a.pending = true
	time.AfterFunc(wait, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.pending = false
		a.signalLocked()
	})
}

func (a *AuthChanges) signalLocked() {
	close(a.ch)
	a.ch = make(chan struct{})
	a.last = time.Now()
}
