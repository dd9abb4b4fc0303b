package bunstore

import (
	"context"
	"errors"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/uptrace/bun"
)

// The bounds of each statement of a list (README, "Fair share of the
// database"): the repository's timeout on waiting for a connection, the
// query bound on the statement, the caller's place while it runs.

// errQueryBound is the cause of the context that bounds a list's
// statement on SQLite (bound.Bounds.Query).
var errQueryBound = errors.New("bunstore: the list's statement ran past the query bound")

// listStatement runs fn, one statement of a list (the count or a page),
// as one bounded call (bound.Bounds.Enter: the repository's timeout, the
// caller's place): it takes a connection for fn alone, runs fn under the
// query bound (bound.Bounds.Query) and gives the connection back when fn
// returns.
func (r *CacheRepository) listStatement(ctx context.Context, fn func(ctx context.Context, db bun.IDB) error) (err error) {
	ctx, done := r.bounds.Enter(ctx)
	defer done(&err)
	conn, err := r.handle.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return dberr.WithRetry(ctx, func() error { return r.eng.BoundQuery(ctx, r.bounds.Query, conn, fn) })
}
