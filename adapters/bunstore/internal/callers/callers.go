// Package callers bounds how many calls each caller runs at once on one
// database, and meters each call's time on a connection against its
// caller's Budget (README, "Fair share of the database"). The caller is
// the domain.Caller each store call is made for.
package callers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
)

// Limit bounds how many repository calls one caller (the domain.Caller
// the store was bound to by For) runs at once on one database, so that the
// other callers always find a connection; calls without one are not
// bounded. A list takes its place per page. Share one Limit between every
// store of a database (the handle keeps it): the bound is on the pool.
// With a Budget, the time each call holds a connection is charged to its
// caller.
type Limit struct {
	per    int
	budget *Budget
	// pool holds one token per connection of the pool for the bounded
	// calls, which take one after their caller's place: the wait for a
	// connection happens here (connTokens), and the budget is charged
	// from the token on, so a caller pays for its time on a connection,
	// never for waiting behind others.
	pool *connTokens
	// Wait bounds the wait for a place below the call's own bound (the
	// repository's timeout); zero waits that whole bound. Tests shorten it.
	Wait time.Duration
	mu   sync.Mutex
	held map[domain.Caller]*callerSlots
	// answered is when a call last got an answer from the database (unix
	// nanoseconds), whoever the caller: a wait for a place that saw none
	// was kept out by the database, not by its caller's other calls.
	answered atomic.Int64
}

type callerSlots struct {
	slots chan struct{}
	users int
}

// ErrCallerBusy answers a call whose caller had all its places taken by
// its other calls for as long as the call may wait for the database (the
// repository's timeout). It is answered 429 with Retry-After (README,
// "Fair share of the database").
var ErrCallerBusy = &domain.Error{Kind: domain.KindTooMany, Code: "TOO_MANY_REQUESTS",
	Message: "too many of your requests are using the database at once; try again shortly", RetryAfter: time.Second}

// New returns the bound of n calls at once per caller on a pool of size
// connections; n <= 0 means half of the pool (at least one), and a pool
// without a size has no bound (and meters nothing). budget, when not nil,
// is charged the time each call holds a connection.
func New(size, n int, budget *Budget) *Limit {
	if n <= 0 {
		n = max(size/2, 1)
		if size <= 0 {
			n = 0
		}
	}
	return &Limit{per: n, budget: budget, pool: newConnTokens(size),
		held: map[domain.Caller]*callerSlots{}}
}

// PerCaller returns how many calls one caller may run at once (0: no bound).
func (l *Limit) PerCaller() int {
	if l == nil {
		return 0
	}
	return l.per
}

// noteAnswer records that the database answered a call, when it did.
func (l *Limit) noteAnswer(answered bool) {
	if answered {
		l.answered.Store(time.Now().UnixNano())
	}
}

// Answered records that the database answered a question asked outside
// any bounded call (the data version of bunstore's entry cache,
// cache_read.go), which tells as much about the database as a call's
// answer.
func (l *Limit) Answered() {
	if l != nil {
		l.noteAnswer(true)
	}
}

// Call is one call's hold on its caller's place (Acquire), or, for a
// grouped write, which holds none (Grouped), what charges its time in its
// group to its caller. Its methods do nothing on a nil Call (no Limit).
type Call struct {
	l      *Limit
	caller domain.Caller
	// slots are the caller's places, one of which the call holds; nil
	// when it holds none.
	slots *callerSlots
	// since is when the call got its pool token; spent, whether its
	// caller had spent its budget then.
	since time.Time
	spent bool
	// waited is how long (nanoseconds) the call waited for SQLite's write
	// gate (Waited): other writers' time, which its caller is not charged.
	waited atomic.Int64
	// metered is set on a grouped write whose caller Charge charges.
	metered bool
}

// Grouped returns the hold of caller's call whose statements run in a
// group's transaction: the group holds one connection for all the writers
// it runs, so the call takes no place of its caller's. Its time in the
// group is charged to its caller by Charge.
func (l *Limit) Grouped(caller domain.Caller) *Call {
	if l == nil || l.per <= 0 {
		return nil
	}
	return &Call{l: l, caller: caller, metered: caller != (domain.Caller{}) && l.budget != nil && l.pool != nil}
}

// Charge charges d, the time a group spent on the write of c, to the
// write's caller: a grouped write takes no connection of its own, but on
// SQLite it holds the database's one writer. Without a caller or a budget
// it charges nothing.
func (c *Call) Charge(d time.Duration) {
	if c != nil && c.metered {
		c.l.budget.charge(c.caller, d)
	}
}

// Waited adds d to the time c waited for SQLite's write gate.
func (c *Call) Waited(d time.Duration) {
	if c != nil {
		c.waited.Add(int64(d))
	}
}

// Release ends c; answered says whether the database answered it.
func (c *Call) Release(answered bool) {
	if c == nil {
		return
	}
	l := c.l
	if c.slots == nil {
		l.noteAnswer(answered)
		return
	}
	if l.pool != nil {
		l.budget.charge(c.caller, time.Since(c.since)-time.Duration(c.waited.Load()))
		l.pool.give(c.caller, c.spent)
	}
	l.noteAnswer(answered)
	<-c.slots.slots
	l.leave(c.caller, c.slots)
}

// leave drops one user of caller's places s.
func (l *Limit) leave(caller domain.Caller, s *callerSlots) {
	l.mu.Lock()
	if s.users--; s.users == 0 {
		delete(l.held, caller)
	}
	l.mu.Unlock()
}

// Acquire takes one of caller's places, waiting until ctx (bounded
// by the repository's timeout) ends, or at most l.Wait when set. It
// returns the call's hold, to release when the call ends; ErrCallerBusy
// when no place came free in time, ctx's error when the caller's own
// context ended first.
func (l *Limit) Acquire(ctx context.Context, caller domain.Caller) (*Call, error) {
	if l == nil || l.per <= 0 {
		return nil, nil
	}
	if caller == (domain.Caller{}) {
		// Not bounded, but its answer says the database answers (the
		// background loops poll several times a second).
		return &Call{l: l}, nil
	}
	l.mu.Lock()
	s := l.held[caller]
	if s == nil {
		s = &callerSlots{slots: make(chan struct{}, l.per)}
		l.held[caller] = s
	}
	s.users++
	l.mu.Unlock()
	// placed takes a pool token for a call that has its place.
	placed := func() (*Call, error) {
		c := &Call{l: l, caller: caller, slots: s}
		if l.pool != nil {
			c.spent = l.budget.Spent(caller) > 0
			if err := l.pool.takeFor(ctx, caller, c.spent); err != nil {
				<-s.slots
				l.leave(caller, s)
				if errors.Is(err, dberr.ErrPastBound) {
					return nil, &dberr.Outage{Kind: domain.ErrDatabaseUnavailable, Cause: dberr.ErrPastBound}
				}
				return nil, err
			}
			c.since = time.Now()
		}
		return c, nil
	}
	select {
	case s.slots <- struct{}{}:
		return placed()
	default:
	}
	waitFrom := time.Now().UnixNano()
	// busy is the refusal when no place came free in time: the caller's
	// when the database answered other calls in the second half of the
	// wait, the database's when it did not (it froze or went away).
	busy := func() error {
		half := waitFrom + (time.Now().UnixNano()-waitFrom)/2
		if l.answered.Load() < half {
			return &dberr.Outage{Kind: domain.ErrDatabaseUnavailable, Cause: dberr.ErrPastBound}
		}
		return ErrCallerBusy
	}
	var expired <-chan time.Time
	if l.Wait > 0 {
		timer := time.NewTimer(l.Wait)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case s.slots <- struct{}{}:
		return placed()
	case <-expired:
		l.leave(caller, s)
		return nil, busy()
	case <-ctx.Done():
		l.leave(caller, s)
		if errors.Is(context.Cause(ctx), dberr.ErrPastBound) {
			// The repository's own bound ended the wait.
			return nil, busy()
		}
		return nil, context.Cause(ctx)
	}
}
