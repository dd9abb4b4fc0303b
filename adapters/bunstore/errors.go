package bunstore

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

// Driver errors are read here, by type and code, never by message. The
// repositories turn what they learn into domain sentinels; anything else
// leaves this package wrapped (%w) as an internal failure.

// PostgreSQL SQLSTATE codes this package reacts to.
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
)

// uniqueViolation describes a failed unique constraint.
type uniqueViolation struct {
	// primaryKey is set when the primary key failed rather than another
	// unique index. On PostgreSQL that is told by the constraint name,
	// which this package always gives as <table>_pkey.
	primaryKey bool
	// constraint is PostgreSQL's constraint name; SQLite reports none.
	constraint string
}

// asUniqueViolation reports whether err is a unique-constraint failure.
func asUniqueViolation(err error) (uniqueViolation, bool) {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		if pg.Code != pgUniqueViolation {
			return uniqueViolation{}, false
		}
		return uniqueViolation{primaryKey: strings.HasSuffix(pg.ConstraintName, "_pkey"), constraint: pg.ConstraintName}, true
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return uniqueViolation{primaryKey: true}, true
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return uniqueViolation{}, true
		}
	}
	return uniqueViolation{}, false
}

// isTransient reports whether err is a failure that the same statement may
// not meet again: a PostgreSQL serialization failure or deadlock, or an
// SQLite database that stayed busy or locked past the busy timeout.
func isTransient(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == pgSerializationFailure || pg.Code == pgDeadlockDetected
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		primary := lite.Code() & 0xff
		return primary == sqlite3.SQLITE_BUSY || primary == sqlite3.SQLITE_LOCKED
	}
	return false
}

// maxTransientTries bounds how often withRetry runs a statement that keeps
// failing transiently.
const maxTransientTries = 5

// withRetry runs fn until it succeeds, fails for good, or has failed
// transiently maxTransientTries times; a short random pause separates the
// tries. The last error is returned, marked as busy when it was transient.
func withRetry(ctx context.Context, fn func() error) error {
	var err error
	for try := 1; ; try++ {
		err = fn()
		if err == nil || !isTransient(err) {
			return err
		}
		if try == maxTransientTries {
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

// dbError wraps a driver error that no sentinel describes, naming the
// operation. Unique violations never reach it: each caller translates
// them first, so no raw constraint message escapes as a conflict.
func dbError(op string, err error) error {
	return fmt.Errorf("bunstore: %s: %w", op, err)
}

// outage is a failure of the database itself, not of the request: kind
// (domain.ErrDatabaseUnavailable or domain.ErrStorageFull) decides the
// answer, cause says what happened, for the log.
type outage struct {
	kind  *domain.Error
	cause error
}

func (e *outage) Error() string   { return "bunstore: " + e.kind.Message + ": " + e.cause.Error() }
func (e *outage) Unwrap() []error { return []error{e.kind, e.cause} }

// translate turns a failure of the database into the domain error clients
// are answered with: past the bound of ctx (see bounds.enter), or a
// connection that cannot be made or was lost, is ErrDatabaseUnavailable;
// a full disk is ErrStorageFull. Domain errors and anything else come back
// as they are.
func translate(ctx context.Context, err error) error {
	var de *domain.Error
	switch {
	case errors.As(err, &de):
		return err
	case isStorageFull(err):
		return &outage{kind: domain.ErrStorageFull, cause: err}
	case context.Cause(ctx) == errPastBound:
		return &outage{kind: domain.ErrDatabaseUnavailable, cause: errPastBound}
	case isUnavailable(err):
		return &outage{kind: domain.ErrDatabaseUnavailable, cause: err}
	}
	return err
}

// PostgreSQL SQLSTATE codes of a server that cannot serve now.
const (
	pgDiskFull            = "53100"
	pgTooManyConnections  = "53300"
	pgAdminShutdown       = "57P01"
	pgCrashShutdown       = "57P02"
	pgCannotConnectNow    = "57P03"
	pgReadOnlyTransaction = "25006" // a standby, or a primary just demoted
	pgConnectionClass     = "08"
)

// isStorageFull reports whether err is a write refused for want of disk:
// SQLITE_FULL, or PostgreSQL's disk_full.
func isStorageFull(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == pgDiskFull
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code()&0xff == sqlite3.SQLITE_FULL
	}
	return false
}

// isUnavailable reports whether err says the database cannot be reached or
// cannot serve now: a connection refused, reset, timed out or closed
// under the statement (pgx's "conn closed", met when a primary dies
// between the statements of one call), a server shutting down, starting up or read-only
// (a standby), an SQLite file that stayed busy, became read-only or cannot
// be read or opened.
func isUnavailable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case pgTooManyConnections, pgAdminShutdown, pgCrashShutdown, pgCannotConnectNow, pgReadOnlyTransaction:
			return true
		}
		return strings.HasPrefix(pg.Code, pgConnectionClass)
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
