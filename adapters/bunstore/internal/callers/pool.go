package callers

import (
	"context"
	"sync"
)

// connTokens hands out one token per connection of the pool to the
// bounded calls (callerLimit). The calls of callers whose budget of
// database time is spent hold at most half the tokens between them (at
// least one), and wait behind every call of callers who have some: the
// others always find a connection soon, whatever the spent callers still
// have in flight. The last quarter of the tokens (reserve) goes only to
// a caller's lone call — one whose caller has no other call in flight —
// with budget left: however many callers each run their own bound of
// calls at once, a caller that runs none finds a connection. Within each
// class, first come, first served. Nothing running is stopped; only the
// order of the waiting calls changes.
type connTokens struct {
	mu   sync.Mutex
	free int
	// spentMax bounds spentHeld, the tokens of spent callers' calls.
	spentMax, spentHeld int
	reserve             int
	// high queues lone calls with budget left, mid their callers' other
	// calls, low the calls of spent callers.
	high, mid, low []chan struct{}
}

func newConnTokens(n int) *connTokens {
	n = max(n, 1)
	return &connTokens{free: n, spentMax: max(n/2, 1), reserve: n / 4}
}

// take is takeFor of a lone call.
func (p *connTokens) take(ctx context.Context, spent bool) error { return p.takeFor(ctx, spent, true) }

// takeFor waits for a token until ctx ends; spent puts the call behind the
// calls of callers with budget left, and a call that is not lone (its
// caller has others in flight) takes none of the reserve.
func (p *connTokens) takeFor(ctx context.Context, spent, lone bool) error {
	privileged := lone && !spent
	p.mu.Lock()
	if p.free > 0 && (privileged || p.free > p.reserve) && (!spent || p.spentHeld < p.spentMax) {
		p.free--
		if spent {
			p.spentHeld++
		}
		p.mu.Unlock()
		return nil
	}
	ch := make(chan struct{}, 1)
	switch {
	case spent:
		p.low = append(p.low, ch)
	case privileged:
		p.high = append(p.high, ch)
	default:
		p.mid = append(p.mid, ch)
	}
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		queued := remove(&p.high, ch) || remove(&p.mid, ch) || remove(&p.low, ch)
		p.mu.Unlock()
		if !queued {
			// The token came as the wait ended: pass it on.
			p.give(spent)
		}
		return context.Cause(ctx)
	}
}

// give returns the token of a call taken with spent: to the first lone
// call with budget left; else, when the token is not one of the reserve,
// to the first other call of a caller with budget left, or to the first
// call of a spent caller while they hold less than their share; else to
// the free ones.
func (p *connTokens) give(spent bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if spent {
		p.spentHeld--
	}
	aboveReserve := p.free >= p.reserve
	switch {
	case len(p.high) > 0:
		p.high[0] <- struct{}{}
		p.high = p.high[1:]
	case aboveReserve && len(p.mid) > 0:
		p.mid[0] <- struct{}{}
		p.mid = p.mid[1:]
	case aboveReserve && len(p.low) > 0 && p.spentHeld < p.spentMax:
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
