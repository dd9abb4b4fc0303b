package bunstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
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
