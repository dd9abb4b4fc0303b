package bunstore

import (
	"context"
	"errors"

	"github.com/uptrace/bun"
)

// The bounds of each statement of a list (README, "Fair share of the
// database"): the repository's timeout on waiting for a connection, the
// query bound on the statement, the caller's place while it runs.

// errQueryBound is the cause of the context that bounds a list's
// statement on SQLite (bounds.query).
var errQueryBound = errors.New("bunstore: the list's statement ran past the query bound")

// pgQueryCanceled is the SQLSTATE of a statement PostgreSQL cancelled,
// here by its statement_timeout.
const pgQueryCanceled = "57014"

// listStatement runs fn, one statement of a list (the count or a page),
// as one bounded call (bounds.enter: the repository's timeout, the
// caller's place): it takes a connection for fn alone, runs fn under the
// query bound (bounds.query) and gives the connection back when fn
// returns.
func (r *CacheRepository) listStatement(ctx context.Context, fn func(ctx context.Context, db bun.IDB) error) (err error) {
	ctx, done := r.bounds.enter(ctx)
	defer done(&err)
	conn, err := r.handle.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return withRetry(ctx, func() error { return r.bounds.queryBounded(ctx, conn, fn) })
}

// queryBounded runs fn on conn, bounding the database's time on it by
// b.query. Past the bound fn's error is wrapped in
// domain.ErrQueryTooExpensive. On SQLite the bound is a deadline of fn's
// context: the driver interrupts the statement. On PostgreSQL it is the
// server's statement_timeout, set for a transaction of its own (SET
// LOCAL, so nothing stays on a connection that a pool such as PgBouncer
// passes on): the server stops a statement that works past it, while a
// server that stops answering meets the repository's timeout as any
// other call does and stays domain.ErrDatabaseUnavailable.
func (b bounds) queryBounded(ctx context.Context, conn bun.Conn, fn func(ctx context.Context, db bun.IDB) error) error {
	return engineOf(conn).queryBounded(ctx, b, conn, fn)
}
