package bunstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
)

func TestUniqueViolationsAreReadByCodeOnPostgres(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		err        error
		ok, pkey   bool
		constraint string
	}{
		{"a primary key violation", &pgconn.PgError{Code: "23505", ConstraintName: "user_cache_pkey"}, true, true, "user_cache_pkey"},
		{"a unique index violation", &pgconn.PgError{Code: "23505", ConstraintName: "user_cache_natural_key"}, true, false, "user_cache_natural_key"},
		{"a wrapped violation", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505", ConstraintName: "t_pkey"}), true, true, "t_pkey"},
		{"a not-null violation", &pgconn.PgError{Code: "23502", Message: "duplicate key value violates unique constraint"}, false, false, ""},
		{"a message that only looks like one", errors.New(`ERROR: duplicate key value violates unique constraint "t_pkey" (SQLSTATE 23505)`), false, false, ""},
	} {
		uv, ok := dberr.AsUniqueViolation(c.err)
		if ok != c.ok || uv.PrimaryKey != c.pkey || uv.Constraint != c.constraint {
			t.Errorf("%s: dberr.AsUniqueViolation = %+v, %v; want primaryKey %v, constraint %q, %v", c.name, uv, ok, c.pkey, c.constraint, c.ok)
		}
	}
}

func TestUniqueViolationsAreReadByCodeOnSQLite(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite::memory:")
	for _, stmt := range []string{
		"CREATE TABLE t (id TEXT PRIMARY KEY, u TEXT, n TEXT NOT NULL)",
		"CREATE UNIQUE INDEX t_u ON t (u)",
		"INSERT INTO t VALUES ('a', 'x', 'n')",
	} {
		if _, err := db.sql.ExecContext(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		stmt     string
		ok, pkey bool
	}{
		{"INSERT INTO t VALUES ('a', 'y', 'n')", true, true},
		{"INSERT INTO t VALUES ('b', 'x', 'n')", true, false},
		{"INSERT INTO t VALUES ('c', 'z', NULL)", false, false},
	} {
		_, err := db.sql.ExecContext(t.Context(), c.stmt)
		if err == nil {
			t.Fatalf("%s succeeded", c.stmt)
		}
		uv, ok := dberr.AsUniqueViolation(err)
		if ok != c.ok || uv.PrimaryKey != c.pkey {
			t.Errorf("%s: dberr.AsUniqueViolation(%v) = %+v, %v; want primaryKey %v, %v", c.stmt, err, uv, ok, c.pkey, c.ok)
		}
	}
}

func TestWithRetryRetriesTransientErrorsOnly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		failures  int
		err       error
		wantCalls int
		wantErr   bool
	}{
		{"a serialization failure passes on retry", 2, &pgconn.PgError{Code: "40001"}, 3, false},
		{"a deadlock passes on retry", 1, &pgconn.PgError{Code: "40P01"}, 2, false},
		{"a lasting serialization failure gives up", 100, &pgconn.PgError{Code: "40001"}, dberr.MaxTransientTries, true},
		{"a unique violation is not retried", 100, &pgconn.PgError{Code: "23505"}, 1, true},
		{"any other error is not retried", 100, errors.New("boom"), 1, true},
	} {
		calls := 0
		err := dberr.WithRetry(t.Context(), func() error {
			calls++
			if calls <= c.failures {
				return c.err
			}
			return nil
		})
		if calls != c.wantCalls || (err != nil) != c.wantErr || (err != nil && !errors.Is(err, c.err)) {
			t.Errorf("%s: %d calls, err %v; want %d calls, error %v wrapping the cause", c.name, calls, err, c.wantCalls, c.wantErr)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := dberr.WithRetry(ctx, func() error { return &pgconn.PgError{Code: "40001"} }); !errors.Is(err, context.Canceled) {
		t.Errorf("dberr.WithRetry with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestDriverErrorsOtherThanConflictsStayInternal(t *testing.T) {
	t.Parallel()
	repo := NewCacheRepository(openTestDB(t, "sqlite::memory:"), "no_such_table")
	err := repo.Create(t.Context(), testEntry(1), testNow, domain.Quota{})
	var de *domain.Error
	if err == nil || errors.As(err, &de) {
		t.Errorf("Create in a missing table = %v, want an untranslated (internal) error", err)
	}
	if _, err := repo.Get(t.Context(), "x", testNow); err == nil || errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("Get from a missing table = %v, want an internal error, not ErrCacheNotFound", err)
	}
}
