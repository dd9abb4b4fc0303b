// Package bound bounds every call of bunstore's stores: its time, from
// asking the pool for a connection to the last row read, the database's
// time on each statement of a list, and its caller's place
// (internal/callers). It translates what the database answers past the
// bound, or in an outage, into domain errors at this boundary
// (internal/dberr).
package bound

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
)

// Bounds are the bounds of every call of a handle's stores.
type Bounds struct {
	// Caller is whose work the calls are: a store's For sets it on its
	// copy (README, "Fair share of the database"); zero is not bounded.
	Caller domain.Caller
	// Timeout bounds each call.
	Timeout time.Duration
	// Query bounds the database's time on each statement of a list.
	Query time.Duration
	// Callers bounds each caller's calls at once; nil bounds none.
	Callers *callers.Limit
}

// Call is one bounded store call (Enter).
type Call struct {
	ctx    context.Context //nolint:containedctx // the call's own, to translate its error
	cancel context.CancelFunc
	// hold is the call's hold on its caller's place (nil: no bound).
	hold *callers.Call
	// refused is why the call was refused its place.
	refused error
}

// Enter starts one bounded store call: it returns the context the call
// must use and the Call, whose Done the call defers with the address of
// its error, to translate a failure of the database into a domain error.
// With a callers.Limit, Enter first takes one of b.Caller's places; a
// refused call gets a context already ended, and Done answers the refusal.
// A bounded call never enters another.
func (b Bounds) Enter(ctx context.Context) (context.Context, *Call) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.Timeout, dberr.ErrPastBound)
	hold, refused := b.Callers.Acquire(ctx, b.Caller)
	return start(ctx, cancel, hold, refused)
}

// EnterGrouped is Enter for a call whose statements run in a group's
// transaction (internal/batch): the group holds one connection for all its
// writers, so the call takes no place of its caller's, and one user's
// writes still batch together. Its Call charges its time in the group.
func (b Bounds) EnterGrouped(ctx context.Context) (context.Context, *Call) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.Timeout, dberr.ErrPastBound)
	return start(ctx, cancel, b.Callers.Grouped(b.Caller), nil)
}

// start is the Call of ctx, ended by cancel, holding hold or refused.
func start(ctx context.Context, cancel context.CancelFunc, hold *callers.Call, refused error) (context.Context, *Call) {
	if refused != nil {
		ctx, stop := context.WithCancelCause(ctx)
		stop(refused)
		return ctx, &Call{cancel: cancel, refused: refused}
	}
	return ctx, &Call{ctx: ctx, cancel: cancel, hold: hold}
}

// Done ends the call; errp holds its error, which it translates.
func (c *Call) Done(errp *error) {
	if c.refused != nil {
		if *errp != nil {
			*errp = fmt.Errorf("bunstore: %w", c.refused)
		}
		c.cancel()
		return
	}
	if *errp != nil {
		*errp = dberr.Translate(c.ctx, *errp)
	}
	c.hold.Release(answered(*errp))
	c.cancel()
}

// Hold returns the call's hold on its caller's place, which the write
// gate notes its wait in and a group charges (internal/writegate).
func (c *Call) Hold() *callers.Call {
	if c == nil {
		return nil
	}
	return c.hold
}

// answered reports whether a call that ended with err got an answer from
// the database: a result, or a refusal of the database's own (a
// conflict, nothing found), not an outage and not a call given up.
func answered(err error) bool {
	return err == nil || !(errors.Is(err, domain.ErrDatabaseUnavailable) || errors.Is(err, domain.ErrStorageFull) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
