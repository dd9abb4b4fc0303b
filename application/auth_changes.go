package application

import (
	"sync"
	"time"
)

// AuthChangesGap is the shortest interval between two signals of
// AuthChanges: bumps closer together are signalled once, at the end of
// the interval, so a burst of logouts wakes every open stream at most
// four times a second.
const AuthChangesGap = 250 * time.Millisecond

// AuthChanges tells the holders of long-lived authorisations (event
// streams) that a session or a signing key may have been revoked in this
// process. It carries no detail: a holder re-checks its principal with
// Authenticate.Recheck (ARCHITECTURE.md, "The change feed").
//
// It is one channel, closed and replaced on each signal, so waiters need
// not register. Safe for concurrent use; a nil *AuthChanges never changes.
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
// is on the monotonic clock: it paces wake-ups and decides nothing.
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
