package bunstore

import (
	"context"
	"sync"
)

// connTokens hands out one token per connection of the pool to the
// bounded calls (CallerLimit). A call of a caller whose budget of
// database time is spent waits behind every call of callers who have
// some: it is served only when no such call waits. Within each class,
// first come, first served. Nothing running is stopped; only the order
// of the waiting calls changes, so a caller that overdrew its budget
// with costly calls in flight does not also make the others queue behind
// its next ones.
type connTokens struct {
	mu        sync.Mutex
	free      int
	high, low []chan struct{}
}

func newConnTokens(n int) *connTokens { return &connTokens{free: max(n, 1)} }

// take waits for a token until ctx ends; spent puts the call behind the
// calls of callers with budget left.
func (p *connTokens) take(ctx context.Context, spent bool) error {
	p.mu.Lock()
	if p.free > 0 {
		// Calls wait only while no token is free.
		p.free--
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
			p.give()
		}
		return context.Cause(ctx)
	}
}

// give returns a token: to the first call of a caller with budget left,
// else to the first of the others, else to the free ones.
func (p *connTokens) give() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range []*[]chan struct{}{&p.high, &p.low} {
		if len(*q) > 0 {
			ch := (*q)[0]
			*q = (*q)[1:]
			ch <- struct{}{}
			return
		}
	}
	p.free++
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
