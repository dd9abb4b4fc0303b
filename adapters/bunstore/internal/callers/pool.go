package callers

import (
	"context"
	"sync"

	"github.com/cachegate/cachegate/domain"
)

// connTokens hands out one token per connection of the pool to the
// bounded calls (Limit); ARCHITECTURE.md, "Per-caller caps". Spent
// callers' calls hold at most half the tokens and wait behind the others';
// the last quarter (reserve) goes only to a call whose caller holds no
// token and has budget left. Nothing running is stopped; only the order of
// the waiting calls changes. A waiting call's class is judged when a token
// comes free, not on arrival: else a caller whose calls kept arriving
// would never count as having nothing in flight. Within each class, first
// come, first served.
type connTokens struct {
	mu   sync.Mutex
	free int
	// spentMax bounds spentHeld, the tokens of spent callers' calls.
	spentMax, spentHeld int
	reserve             int
	// held counts the tokens each caller holds (callers holding none are
	// not in it).
	held map[domain.Caller]int
	// queue holds the waiting calls in arrival order.
	queue []*tokenWait
}

// tokenWait is one call waiting for a token.
type tokenWait struct {
	caller domain.Caller
	spent  bool
	ready  chan struct{}
}

func newConnTokens(n int) *connTokens {
	n = max(n, 1)
	return &connTokens{free: n, spentMax: max(n/2, 1), reserve: n / 4, held: map[domain.Caller]int{}}
}

// takeFor waits for a token for one of caller's calls until ctx ends;
// spent puts the call behind the calls of callers with budget left.
func (p *connTokens) takeFor(ctx context.Context, caller domain.Caller, spent bool) error {
	p.mu.Lock()
	w := &tokenWait{caller: caller, spent: spent}
	// Whatever is queued cannot take a free token (handOut ran when it
	// came free), so a call that may take one does not pass anyone who
	// could.
	if p.admits(w) {
		p.grant(w)
		p.mu.Unlock()
		return nil
	}
	w.ready = make(chan struct{}, 1)
	p.queue = append(p.queue, w)
	p.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		queued := p.remove(w)
		p.mu.Unlock()
		if !queued {
			// The token came as the wait ended: pass it on.
			p.give(caller, spent)
		}
		return context.Cause(ctx)
	}
}

// give returns the token of one of caller's calls, taken with spent, and
// hands out what is free to the calls waiting.
func (p *connTokens) give(caller domain.Caller, spent bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if spent {
		p.spentHeld--
	}
	if p.held[caller]--; p.held[caller] <= 0 {
		delete(p.held, caller)
	}
	p.free++
	p.handOut()
}

// privileged reports whether w may take the reserve: its caller has
// budget left and holds no token now.
func (p *connTokens) privileged(w *tokenWait) bool { return !w.spent && p.held[w.caller] == 0 }

// admits reports whether a free token may go to w now.
func (p *connTokens) admits(w *tokenWait) bool {
	switch {
	case p.free == 0:
		return false
	case w.spent:
		return p.free > p.reserve && p.spentHeld < p.spentMax
	default:
		return p.free > p.reserve || p.privileged(w)
	}
}

// grant gives w a token.
func (p *connTokens) grant(w *tokenWait) {
	p.free--
	p.held[w.caller]++
	if w.spent {
		p.spentHeld++
	}
}

// handOut gives the free tokens to the waiting calls: first to the
// privileged ones, then to the others of callers with budget left, then
// to spent callers' while they hold less than their share; in each
// class the first to come.
func (p *connTokens) handOut() {
	for p.free > 0 && len(p.queue) > 0 {
		next := -1
		for class := 0; class < 3 && next < 0; class++ {
			for i, w := range p.queue {
				if p.classOf(w) == class && p.admits(w) {
					next = i
					break
				}
			}
		}
		if next < 0 {
			return
		}
		w := p.queue[next]
		p.queue = append(p.queue[:next], p.queue[next+1:]...)
		p.grant(w)
		w.ready <- struct{}{}
	}
}

// classOf orders the waiting calls: 0 privileged, 1 others with budget
// left, 2 spent.
func (p *connTokens) classOf(w *tokenWait) int {
	switch {
	case w.spent:
		return 2
	case p.privileged(w):
		return 0
	default:
		return 1
	}
}

// remove takes w out of the queue and reports whether it was there.
func (p *connTokens) remove(w *tokenWait) bool {
	for i, q := range p.queue {
		if q == w {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return true
		}
	}
	return false
}
