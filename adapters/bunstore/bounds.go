package bunstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// DefaultTimeout bounds each store call when no WithTimeout is given:
// waiting for a pooled connection, every statement and reading the rows.
const DefaultTimeout = 5 * time.Second

// WithTimeout bounds each call of the handle's stores to d, from asking
// the pool for a connection to the last row read. Past it the call fails
// with an error wrapping domain.ErrDatabaseUnavailable. A database that is
// frozen, unreachable or failing over therefore never holds a request
// longer than d. Zero or less means DefaultTimeout.
func WithTimeout(d time.Duration) Option {
	return func(c *openConfig) { c.bounds.timeout = d }
}

// WithUngroupedWrites makes the handle's CacheRepositories run each write
// on its own: on SQLite outside the handle's write group (write_group.go),
// on PostgreSQL outside the batches of creates (create_batch.go). It is
// for a tool that wraps many writes in a transaction of its own, by BEGIN
// and COMMIT on a pool of one connection, as the bench seeder does. The
// writes of a server should stay grouped.
func WithUngroupedWrites() Option {
	return func(c *openConfig) { c.bounds.ungrouped = true }
}

// DefaultQueryTimeout bounds each statement of a list when no
// WithQueryTimeout is given.
const DefaultQueryTimeout = 2 * time.Second

// WithQueryTimeout bounds the time the database may spend on each
// statement of a CacheRepository's List (the count, and each page of
// rows) to d. Past it the list fails with an error wrapping
// domain.ErrQueryTooExpensive: the query, not the database, is the
// cause. Waiting for a connection stays under WithTimeout's bound
// (domain.ErrDatabaseUnavailable), and so does a PostgreSQL server that
// stops answering: there the bound is the server's statement_timeout,
// which a frozen server cannot apply. Zero or less means
// DefaultQueryTimeout. A d longer than WithTimeout's does not lengthen
// the call: its own bound ends the statement first
// (domain.ErrDatabaseUnavailable).
func WithQueryTimeout(d time.Duration) Option {
	return func(c *openConfig) { c.bounds.query = d }
}

// WithCallerBound bounds the calls each caller runs at once on the
// handle's pool to perCaller (zero or less: half the pool, at least one),
// so that one caller never takes the whole pool (internal/callers). budget,
// when not nil, is charged the time each call holds a connection.
// Without it no caller is bounded.
func WithCallerBound(perCaller int, budget *Budget) Option {
	return func(c *openConfig) { c.callerBound, c.perCaller, c.budget = true, perCaller, budget }
}

// bounds are the handle's bounds of every call.
type bounds struct {
	timeout   time.Duration
	ungrouped bool
	query     time.Duration
	callers   *callers.Limit
	paging    listPaging
}

// fill gives the unset time bounds their defaults.
func (b bounds) fill() bounds {
	if b.timeout <= 0 {
		b.timeout = DefaultTimeout
	}
	if b.query <= 0 {
		b.query = DefaultQueryTimeout
	}
	return b
}

// enter starts one bounded repository call: it returns the context the
// call must use and the function to defer with the address of the call's
// error, which ends the context and translates a failure of the database
// (past the bound, unreachable, full) into a domain error at this
// boundary. Calls nest: an inner call keeps the outer deadline when it is
// sooner.
//
// enterGrouped is enter for a call whose statements run in a group's
// transaction (the SQLite write group and rotation group, PostgreSQL's
// create batches: internal/batch). The group holds one connection for all
// the writers it runs, so such a call holds none of its own while it
// waits: it takes no place of its caller's (README, "Fair share of the
// database"), so one user's writes still batch together.
func (b bounds) enterGrouped(ctx context.Context) (context.Context, func(*error)) {
	return b.enter(callers.MarkHeld(ctx))
}

// With a callerLimit, enter first takes one of the caller's places (an
// inner call runs in its outer call's place). A caller whose places all
// stay taken is refused: the call gets a context that has already ended,
// so its first statement fails at once, and done answers errCallerBusy
// (429) instead.
func (b bounds) enter(ctx context.Context) (context.Context, func(*error)) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, dberr.ErrPastBound)
	ctx, release, refused := b.callers.Acquire(ctx)
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

// probeTable is a name reserved for the readiness check: files made by
// earlier versions hold an empty table of that name, so no assignment may
// use it (migrate.go).
const probeTable = "cachegate_probe"

// Check reports whether db serves reads and writes now, for readiness
// probes. It fails with an error wrapping domain.ErrDatabaseUnavailable
// when the database does not answer within ctx's deadline (or
// DefaultTimeout), cannot be reached, or is a read-only PostgreSQL standby
// (or an SQLite file on a read-only file system); with one wrapping
// domain.ErrStorageFull when an SQLite file's file system has less room
// than a write may need.
//
// On SQLite the check writes nothing (sqlite_ready.go): a read-only query,
// then the space available on the file's file system, statfs(2), which
// passes again once there is room, so readiness recovers by itself. On
// PostgreSQL it asks whether the session is read-only.
func Check(ctx context.Context, db *DB) (err error) {
	ctx, done := bounds{timeout: DefaultTimeout}.enter(ctx)
	defer done(&err)
	defer func() {
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			err = &dberr.Outage{Kind: domain.ErrDatabaseUnavailable, Cause: err}
		}
	}()
	return db.eng.check(ctx, db.sql)
}

// Budget is each caller's budget of database time (internal/callers),
// which WithCallerBound charges and ginhttp checks through
// ports.CallerBudget.
type Budget = callers.Budget

// NewBudget returns the budget of rate database time per second per
// caller, with a burst of burst; a rate or burst of zero or less is no
// budget (nil, which admits every caller). clock is the time it refills
// by (nil: the system clock).
func NewBudget(rate, burst time.Duration, clock ports.Clock) *Budget {
	return callers.NewBudget(rate, burst, clock)
}
