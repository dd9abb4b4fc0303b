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

// Enter starts one bounded store call: it returns the context the
// call must use and the function to defer with the address of the call's
// error, which ends the context and translates a failure of the database
// (past the bound, unreachable, full) into a domain error at this
// boundary. Calls nest: an inner call keeps the outer deadline when it is
// sooner.
//
// EnterGrouped is Enter for a call whose statements run in a group's
// transaction (the SQLite write group and rotation group, PostgreSQL's
// create batches: internal/batch). The group holds one connection for all
// the writers it runs, so such a call holds none of its own while it
// waits: it takes no place of its caller's (README, "Fair share of the
// database"), so one user's writes still batch together.
func (b Bounds) EnterGrouped(ctx context.Context) (context.Context, func(*error)) {
	return b.Enter(callers.MarkHeld(ctx))
}

// With a callerLimit, enter first takes one of b.Caller's places (an
// inner call runs in its outer call's place). A caller whose places all
// stay taken is refused: the call gets a context that has already ended,
// so its first statement fails at once, and done answers errCallerBusy
// (429) instead.
func (b Bounds) Enter(ctx context.Context) (context.Context, func(*error)) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.Timeout, dberr.ErrPastBound)
	ctx, release, refused := b.Callers.Acquire(ctx, b.Caller)
	if refused != nil {
		ctx, stop := context.WithCancelCause(ctx)
		stop(refused)
		return ctx, func(errp *error) {
			if *errp != nil {
				*errp = fmt.Errorf("bunstore: %w", refused)
			}
			cancel()
		}
	}
	return ctx, func(errp *error) {
		if *errp != nil {
			*errp = dberr.Translate(ctx, *errp)
		}
		release(answered(*errp))
		cancel()
	}
}

// answered reports whether a call that ended with err got an answer from
// the database: a result, or a refusal of the database's own (a
// conflict, nothing found), not an outage and not a call given up.
func answered(err error) bool {
	return err == nil || !(errors.Is(err, domain.ErrDatabaseUnavailable) || errors.Is(err, domain.ErrStorageFull) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
