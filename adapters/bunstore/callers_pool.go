package bunstore

import (
	"context"
	"sync"
)

// connTokens hands out one token per connection of the pool to the
// bounded calls (CallerLimit). The calls of callers whose budget of
// database time is spent hold at most half the tokens between them (at
// least one), and wait behind every call of callers who have some: the
// others always find a connection soon, whatever the spent callers still
// have in flight. Within each class, first come, first served. Nothing
// running is stopped; only the order of the waiting calls changes.
type connTokens struct {
	mu   sync.Mutex
	free int
	// spentMax bounds spentHeld, the tokens of spent callers' calls.
	spentMax, spentHeld int
	high, low           []chan struct{}
}

func newConnTokens(n int) *connTokens {
	n = max(n, 1)
	return &connTokens{free: n, spentMax: max(n/2, 1)}
}

// take waits for a token until ctx ends; spent puts the call behind the
// calls of callers with budget left.
func (p *connTokens) take(ctx context.Context, spent bool) error {
	p.mu.Lock()
	if p.free > 0 && (!spent || p.spentHeld < p.spentMax) {
		p.free--
		if spent {
			p.spentHeld++
		}
		p.mu.Unlock()
		return nil
	}
	ch := make(chan struct{}, 1)
	if spent {
		p.low = append(p.low, ch)
	} else {
		p.high = append(p.high, ch)
	}
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		queued := remove(&p.high, ch) || remove(&p.low, ch)
		p.mu.Unlock()
		if !queued {
			// The token came as the wait ended: pass it on.
			p.give(spent)
		}
		return context.Cause(ctx)
	}
}

// give returns the token of a call taken with spent: to the first call
// of a caller with budget left, else to the first of the others while
// they hold less than their share, else to the free ones.
func (p *connTokens) give(spent bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if spent {
		p.spentHeld--
	}
	switch {
	case len(p.high) > 0:
		p.high[0] <- struct{}{}
		p.high = p.high[1:]
	case len(p.low) > 0 && p.spentHeld < p.spentMax:
		p.low[0] <- struct{}{}
		p.low = p.low[1:]
		p.spentHeld++
	default:
		p.free++
	}
}

// remove takes ch out of q and reports whether it was there.
func remove(q *[]chan struct{}, ch chan struct{}) bool {
	for i, c := range *q {
		if c == ch {
			*q = append((*q)[:i], (*q)[i+1:]...)
			return true
		}
	}
	return false
}
