package bunstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// A failure of the database must reach clients as DATABASE_UNAVAILABLE
// (503) or STORAGE_FULL (507), never as an internal error, and no call may
// wait on the database past its bound.

func TestAFullSQLiteFileIsStorageFullAndReadsStillWork(t *testing.T) {
	t.Parallel()
	// max_page_count is per connection, so the pool is that one connection.
	db, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "full.db"), WithMaxOpenConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	repo := migrateTable(t, db, "user_cache")
	var pages int
	if err := db.sql.QueryRowContext(t.Context(), "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(t.Context(), fmt.Sprintf("PRAGMA max_page_count = %d", pages+4)); err != nil {
		t.Fatal(err)
	}
	var full error
	stored := 0
	for i := 0; i < 10_000 && full == nil; i++ {
		if err := repo.Create(t.Context(), testEntry(i), testNow, domain.Quota{}); err != nil {
			full = err
			break
		}
		stored++
	}
	if !errors.Is(full, domain.ErrStorageFull) || domain.KindOf(full) != domain.KindStorageFull {
		t.Fatalf("create on a full file: %v; want ErrStorageFull", full)
	}
	if stored == 0 {
		t.Fatal("not one entry fitted before the file was full")
	}
	for i := range stored {
		if _, err := repo.Get(t.Context(), testEntry(i).ID, testNow); err != nil {
			t.Fatalf("read entry %d of %d while full: %v", i, stored, err)
		}
	}
}

func TestACallPastTheTimeoutIsDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	const bound = 200 * time.Millisecond
	t.Run("waiting for a pooled connection", func(t *testing.T) {
		t.Parallel()
		db, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "pool.db"), WithMaxOpenConns(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		migrateTable(t, db, "user_cache")
		repo := NewCacheRepository(db.with(WithTimeout(bound)), "user_cache")
		held, err := db.sql.Conn(t.Context()) // the pool's one connection
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		assertUnavailableWithin(t, bound, func(ctx context.Context) error {
			_, err := repo.Get(ctx, testEntry(1).ID, testNow)
			return err
		})
	})
	t.Run("a statement blocked on PostgreSQL", func(t *testing.T) {
		t.Parallel()
		db := openTestDB(t, pgtest.New(t))
		migrateTable(t, db, "user_cache")
		repo := NewCacheRepository(db.with(WithTimeout(bound)), "user_cache")
		tx, err := db.sql.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(t.Context(), "LOCK TABLE user_cache IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		assertUnavailableWithin(t, bound, func(ctx context.Context) error {
			_, err := repo.Get(ctx, testEntry(1).ID, testNow)
			return err
		})
		assertUnavailableWithin(t, bound, func(ctx context.Context) error {
			return repo.Create(ctx, testEntry(2), testNow, domain.Quota{})
		})
	})
}

// assertUnavailableWithin runs call and asserts it failed with
// ErrDatabaseUnavailable, not much later than bound.
func assertUnavailableWithin(t *testing.T, bound time.Duration, call func(context.Context) error) {
	t.Helper()
	start := time.Now()
	err := call(t.Context())
	took := time.Since(start)
	if !errors.Is(err, domain.ErrDatabaseUnavailable) || domain.KindOf(err) != domain.KindUnavailable {
		t.Fatalf("call past the bound: %v; want ErrDatabaseUnavailable", err)
	}
	// Generous: the bound is what matters, scheduling on a loaded
	// machine adds to it.
	if took > bound+2*time.Second {
		t.Fatalf("call took %s, bound %s", took, bound)
	}
}

func TestAnUnreachablePostgreSQLIsDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there any more
	_, err = Open(t.Context(), "postgres://cachegate@"+addr+"/db?sslmode=disable")
	if err == nil {
		t.Fatal("Open succeeded with nothing listening")
	}
	if got := dberr.Translate(t.Context(), err); !errors.Is(got, domain.ErrDatabaseUnavailable) {
		t.Fatalf("dberr.Translate(%v) = %v; want ErrDatabaseUnavailable", err, got)
	}
}

func TestTranslateLeavesOtherErrorsAlone(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		domain.ErrCacheNotFound,
		fmt.Errorf("wrapped: %w", domain.ErrCacheEntityAlreadyExists),
		errors.New("bunstore: something unexpected"),
	} {
		if got := dberr.Translate(t.Context(), err); got != err {
			t.Errorf("dberr.Translate(%v) = %v; want it unchanged", err, got)
		}
	}
}

func TestCheckReportsAReadOnlyPostgreSQLAsUnavailable(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	db := openTestDB(t, dsn)
	if err := Check(t.Context(), db); err != nil {
		t.Fatalf("Check on a writable database: %v", err)
	}
	ro := openTestDB(t, dsn+"&options=-c%20default_transaction_read_only%3Don")
	if err := Check(t.Context(), ro); !errors.Is(err, domain.ErrDatabaseUnavailable) {
		t.Fatalf("Check on a read-only session: %v; want ErrDatabaseUnavailable", err)
	}
}

// TestAConnectionClosedUnderACallIsUnavailable: pgx answers "conn closed"
// when the server went away between two statements of one call (seen
// when a Patroni leader was killed, docs/ha.md); that is an outage, 503,
// never a 500.
func TestAConnectionClosedUnderACallIsUnavailable(t *testing.T) {
	t.Parallel()
	err := dberr.Translate(context.Background(), fmt.Errorf("create cache entry: %w", pgconn.ErrConnClosed))
	if !errors.Is(err, domain.ErrDatabaseUnavailable) {
		t.Fatalf("dberr.Translate(conn closed) = %v, want DATABASE_UNAVAILABLE", err)
	}
}
