// Package dberr reads the drivers' errors, SQLite's and PostgreSQL's, by
// type and code, never by message, and turns what they say into the
// domain errors the stores answer with: a failure of the database itself
// (past its bound, unreachable, full) is an Outage, a unique violation is
// told apart by key, transient failures are retried, and a failed batch
// is told refused or unknown (internal/batch's failure rule).
package dberr

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/cachegate/cachegate/domain"
)

// PostgreSQL SQLSTATE codes this package reacts to.
const (
	PGUniqueViolation      = "23505"
	PGSerializationFailure = "40001"
	PGDeadlockDetected     = "40P01"
	// PGQueryCanceled is a statement the server cancelled, as its
	// statement_timeout does.
	PGQueryCanceled = "57014"
)

// UniqueViolation describes a failed unique constraint.
type UniqueViolation struct {
	// PrimaryKey is set when the primary key failed rather than another
	// unique index. On PostgreSQL that is told by the constraint name,
	// which bunstore always gives as <table>_pkey.
	PrimaryKey bool
	// Constraint is PostgreSQL's constraint name; SQLite reports none.
	Constraint string
}

// AsUniqueViolation reports whether err is a unique-constraint failure.
func AsUniqueViolation(err error) (UniqueViolation, bool) {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		if pg.Code != PGUniqueViolation {
			return UniqueViolation{}, false
		}
		return UniqueViolation{PrimaryKey: strings.HasSuffix(pg.ConstraintName, "_pkey"), Constraint: pg.ConstraintName}, true
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return UniqueViolation{PrimaryKey: true}, true
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return UniqueViolation{}, true
		}
	}
	return UniqueViolation{}, false
}

// IsTransient reports whether err is a failure that the same statement may
// not meet again: a PostgreSQL serialization failure or deadlock, or an
// SQLite database that stayed busy or locked past the busy timeout.
func IsTransient(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == PGSerializationFailure || pg.Code == PGDeadlockDetected
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		primary := lite.Code() & 0xff
		return primary == sqlite3.SQLITE_BUSY || primary == sqlite3.SQLITE_LOCKED
	}
	return false
}

// MaxTransientTries bounds how often WithRetry runs a statement that keeps
// failing transiently.
const MaxTransientTries = 5

// WithRetry runs fn until it succeeds, fails for good, or has failed
// transiently MaxTransientTries times; a short random pause separates the
// tries. The last error is returned, marked as busy when it was transient.
func WithRetry(ctx context.Context, fn func() error) error {
	var err error
	for try := 1; ; try++ {
		err = fn()
		if err == nil || !IsTransient(err) {
			return err
		}
		if try == MaxTransientTries {
			return fmt.Errorf("bunstore: the database stayed busy (%d tries): %w", try, err)
		}
		pause := time.Duration(try)*time.Millisecond + rand.N(2*time.Millisecond)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// Wrap wraps a driver error that no sentinel describes, naming the
// operation. Unique violations never reach it: each caller translates
// them first, so no raw constraint message escapes as a conflict.
func Wrap(op string, err error) error {
	return fmt.Errorf("bunstore: %s: %w", op, err)
}

// Outage is a failure of the database itself, not of the request: Kind
// (domain.ErrDatabaseUnavailable or domain.ErrStorageFull) decides the
// answer, Cause says what happened, for the log.
type Outage struct {
	Kind  *domain.Error
	Cause error
}

func (e *Outage) Error() string   { return "bunstore: " + e.Kind.Message + ": " + e.Cause.Error() }
func (e *Outage) Unwrap() []error { return []error{e.Kind, e.Cause} }

// Translate turns a failure of the database into the domain error clients
// are answered with: past the bound of ctx (ErrPastBound), or a
// connection that cannot be made or was lost, is ErrDatabaseUnavailable;
// a full disk is ErrStorageFull. Domain errors and anything else come back
// as they are.
func Translate(ctx context.Context, err error) error {
	var de *domain.Error
	switch {
	case errors.As(err, &de):
		return err
	case IsStorageFull(err):
		return &Outage{Kind: domain.ErrStorageFull, Cause: err}
	case context.Cause(ctx) == ErrPastBound:
		return &Outage{Kind: domain.ErrDatabaseUnavailable, Cause: ErrPastBound}
	case IsUnavailable(err):
		return &Outage{Kind: domain.ErrDatabaseUnavailable, Cause: err}
	}
	return err
}

// PostgreSQL SQLSTATE codes of a server that cannot serve now.
const (
	PGDiskFull            = "53100"
	PGTooManyConnections  = "53300"
	PGAdminShutdown       = "57P01"
	PGCrashShutdown       = "57P02"
	PGCannotConnectNow    = "57P03"
	PGReadOnlyTransaction = "25006" // a standby, or a primary just demoted
	PGConnectionClass     = "08"
)

// IsStorageFull reports whether err is a write refused for want of disk:
// SQLITE_FULL, or PostgreSQL's disk_full.
func IsStorageFull(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == PGDiskFull
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code()&0xff == sqlite3.SQLITE_FULL
	}
	return false
}

// IsUnavailable reports whether err says the database cannot be reached or
// cannot serve now: a connection refused, reset, timed out or closed under
// the statement, a server shutting down, starting up or read-only, an
// SQLite file that stayed busy, became read-only or cannot be opened.
func IsUnavailable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case PGTooManyConnections, PGAdminShutdown, PGCrashShutdown, PGCannotConnectNow, PGReadOnlyTransaction:
			return true
		}
		return strings.HasPrefix(pg.Code, PGConnectionClass)
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY,
			sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
			return true
		}
		return false
	}
	var (
		connect *pgconn.ConnectError
		netErr  net.Error
	)
	return errors.As(err, &connect) || errors.As(err, &netErr) || pgconn.Timeout(err) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// ErrPastBound is the cause of the contexts of a bounded call past its
// bound.
var ErrPastBound = errors.New("bunstore: the database did not answer within the configured timeout")

// RefusedBatch is the failure of a batch the database refused: it
// answered, and nothing of the batch committed.
type RefusedBatch struct{ err error }

func (e *RefusedBatch) Error() string { return e.err.Error() }
func (e *RefusedBatch) Unwrap() error { return e.err }

// BatchFailure is what a batch whose statement or transaction failed with
// err under ctx answers: an error PostgreSQL or SQLite answered committed
// nothing (a RefusedBatch: every work runs again alone); any other failure
// leaves unknown whether it committed, as an Outage does (internal/batch).
func BatchFailure(ctx context.Context, op string, err error) error {
	t := Translate(ctx, err)
	var (
		o    *Outage
		pg   *pgconn.PgError
		lite *sqlite.Error
	)
	switch {
	case errors.As(t, &o):
		return t
	case errors.As(err, &pg), errors.As(err, &lite):
		return &RefusedBatch{err: t}
	}
	return Wrap(op, err)
}

// BatchOutage is the batchers' Outage (internal/batch): every failure but
// a RefusedBatch leaves unknown whether the batch committed.
func BatchOutage(err error) bool {
	var r *RefusedBatch
	return !errors.As(err, &r)
}

// Execer is what runs a statement: a *bun.DB, a bun.Tx, a bun.IDB.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Exec runs one writing statement on db, retrying transient failures
// (WithRetry), and returns how many rows it changed.
func Exec(ctx context.Context, db Execer, query string, args ...any) (int64, error) {
	var n int64
	err := WithRetry(ctx, func() error {
		res, err := db.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
