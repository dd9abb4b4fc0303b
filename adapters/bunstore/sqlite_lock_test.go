package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// lockedByAnotherProcess opens an SQLite file through Open, migrated for
// user_cache and holding testEntry 0 to seed-1, and a second handle on the same file, as another process
// would, which takes the write lock (BEGIN IMMEDIATE) and holds it until
// the test ends.
func lockedByAnotherProcess(t *testing.T, seed int) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locked.db")
	db, err := Open(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	repo := migrateTable(t, db, "user_cache")
	for i := range seed {
		if err := repo.Create(t.Context(), testEntry(i), testNow, domain.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	lockFile(t, path)
	return db
}

// lockFile takes the write lock of the SQLite file at path (BEGIN
// IMMEDIATE) on a handle of its own, as another process would, and holds
// it until the test ends.
func lockFile(t *testing.T, path string) {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		_ = conn.Close()
		_ = other.Close()
	})
}

// failAllWithin runs n concurrent writes and asserts that each fails with
// ErrDatabaseUnavailable before hang, a limit that catches a hang (or a
// wait as long as SQLite's 5 s busy timeout), far above the bound under
// test: not a timing assertion.
func failAllWithin(t *testing.T, n int, hang time.Duration, write func(ctx context.Context, i int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = write(context.Background(), i)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatalf("writes waiting on another process's lock did not answer within %s", hang)
	}
	for i, err := range errs {
		if !errors.Is(err, domain.ErrDatabaseUnavailable) || domain.KindOf(err) != domain.KindUnavailable {
			t.Errorf("write %d on a file another process locks: %v; want ErrDatabaseUnavailable", i, err)
		}
	}
}

func TestSQLiteWritesWaitingOnAnotherProcessAnswerWithinTheBound(t *testing.T) {
	t.Parallel()
	const bound = 300 * time.Millisecond
	t.Run("the repository's bound", func(t *testing.T) {
		t.Parallel()
		repo := NewCacheRepository(lockedByAnotherProcess(t, 0).with(WithTimeout(bound)), "user_cache")
		failAllWithin(t, 8, 10*bound, func(ctx context.Context, i int) error {
			return repo.Create(ctx, testEntry(i), testNow, domain.Quota{})
		})
	})
	t.Run("a caller's deadline sooner than the bound", func(t *testing.T) {
		t.Parallel()
		// The repository's bound is an hour: only the callers' own
		// deadlines can end the wait before SQLite's busy timeout (5 s)
		// does; the group's transaction must end at them, not an hour
		// after it began.
		repo := NewCacheRepository(lockedByAnotherProcess(t, 0).with(WithTimeout(time.Hour)), "user_cache")
		failAllWithin(t, 8, 10*bound, func(ctx context.Context, i int) error {
			ctx, cancel := context.WithTimeout(ctx, bound)
			defer cancel()
			return repo.Create(ctx, testEntry(i), testNow, domain.Quota{})
		})
	})
	t.Run("refresh rotations", func(t *testing.T) {
		t.Parallel()
		// A rotation group's statements run without the driver's watch of
		// their context (rotation_group.go): its BEGIN still ends at the
		// bound.
		path := filepath.Join(t.TempDir(), "locked.db")
		db := openTestDB(t, "sqlite:"+path).with(WithTimeout(bound))
		if err := Migrate(t.Context(), db, nil); err != nil {
			t.Fatal(err)
		}
		s := NewRefreshStore(db)
		rec := func(i int, id string) domain.RefreshRecord {
			return domain.RefreshRecord{ID: id, FamilyID: fmt.Sprint("f", i), UserID: "u1", IssuedAt: testNow, ExpiresAt: testNow.Add(time.Hour)}
		}
		for i := range 4 {
			if err := s.SaveRefresh(t.Context(), rec(i, "t")); err != nil {
				t.Fatal(err)
			}
		}
		lockFile(t, path)
		failAllWithin(t, 4, 10*bound, func(ctx context.Context, i int) error {
			_, err := s.RotateRefresh(ctx, presentedOf(rec(i, "t")), rec(i, "t-next"), testNow, 0)
			return err
		})
	})
	t.Run("updates and deletes", func(t *testing.T) {
		t.Parallel()
		repo := NewCacheRepository(lockedByAnotherProcess(t, 4).with(WithTimeout(bound)), "user_cache")
		failAllWithin(t, 4, 10*bound, func(ctx context.Context, i int) error {
			if i%2 == 0 {
				_, err := repo.Delete(ctx, testEntry(i).ID, testNow, nil)
				return err
			}
			_, err := repo.Update(ctx, testEntry(i).ID, testNow, domain.Quota{}, func(e *domain.Entry) error { return nil })
			return err
		})
	})
}
