package bunstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

func TestTheCallerBoundTakesHalfThePool(t *testing.T) {
	t.Parallel()
	for pool, want := range map[int]int{1: 1, 2: 1, 4: 2, 9: 4} {
		db := openTestDB(t, "sqlite::memory:")
		db.sql.DB.SetMaxOpenConns(pool)
		if got := newCallerLimit(db, 0, nil).PerCaller(); got != want {
			t.Errorf("pool of %d: %d per caller, want %d", pool, got, want)
		}
		if got := newCallerLimit(db, 3, nil).PerCaller(); got != 3 {
			t.Errorf("explicit 3: %d per caller", got)
		}
	}
}

// TestOneCallerNeverTakesThePool: four slow statements of one user on a
// pool of four (each a list page whose reading blocks) leave the other
// users a connection; without the bound they would wait for the
// repository's timeout.
func TestOneCallerNeverTakesThePool(t *testing.T) {
	// hogKey marks the hog's calls, whose rows block.
	type hogKey struct{}
	t.Parallel()
	const pool = 4
	run := func(t *testing.T, db *DB, limit *callers.Limit) (hogs []error, other error) {
		t.Helper()
		var entered sync.WaitGroup
		release := make(chan struct{})
		paging := listPaging{rows: 1, rowRead: func(ctx context.Context) {
			if ctx.Value(hogKey{}) != nil {
				entered.Done()
				<-release
			}
		}}
		opts := []Option{WithTimeout(500 * time.Millisecond)}
		if limit != nil {
			opts = append(opts, withCallerLimit(limit))
		}
		repo := pagedRepo(t, db, "user_cache", paging, opts...)
		seed(t, db, "user_cache", 5, time.Time{})
		hog := context.WithValue(context.Background(), hogKey{}, true)
		blocked := pool
		if limit != nil {
			blocked = limit.PerCaller()
		}
		entered.Add(blocked)
		results := make(chan error, pool)
		for range pool {
			go func() {
				_, err := repo.For(domain.Caller{User: "hog"}).List(hog, ports.ListQuery{Limit: 1}, testNow, func(domain.Entry) error { return nil })
				results <- err
			}()
		}
		entered.Wait()
		// Meanwhile the database answers calls without a caller, as it
		// answers the background loops' polls: the hog's extra calls are
		// kept out by the hog, not by an outage.
		polling := make(chan struct{})
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			for {
				select {
				case <-polling:
					return
				default:
				}
				_, _ = repo.Get(context.Background(), testEntry(1).ID, testNow)
				time.Sleep(time.Millisecond)
			}
		}()
		// The hog's refused calls end on their own; the blocked ones hold
		// their connections until released.
		for range pool - blocked {
			hogs = append(hogs, <-results)
		}
		close(polling)
		<-polled
		_, other = repo.For(domain.Caller{User: "other"}).Get(t.Context(), testEntry(1).ID, testNow)
		close(release)
		for range blocked {
			hogs = append(hogs, <-results)
		}
		return hogs, other
	}
	pagedDatabases(t, func(t *testing.T, db *DB) {
		t.Run("bounded, the other user is served and the hog's extra statements are 429", func(t *testing.T) {
			limit := newCallerLimit(db, 0, nil)
			limit.Wait = 300 * time.Millisecond
			hogs, other := run(t, db, limit)
			if other != nil {
				t.Errorf("the other user's Get = %v, want the entry", other)
			}
			busy := 0
			for _, err := range hogs {
				switch {
				case err == nil:
				case errors.Is(err, callers.ErrCallerBusy):
					busy++
				default:
					t.Errorf("a hog's list = %v", err)
				}
			}
			if busy != pool-limit.PerCaller() {
				t.Errorf("%d of the hog's %d lists refused, want %d", busy, pool, pool-limit.PerCaller())
			}
		})
	}, WithMaxOpenConns(pool))
	t.Run("unbounded, the other user waits out the timeout", func(t *testing.T) {
		t.Parallel()
		db := openTestDB(t, "sqlite:"+t.TempDir()+"/unbounded.db")
		db.sql.DB.SetMaxOpenConns(pool)
		if _, other := run(t, db, nil); !errors.Is(other, domain.ErrDatabaseUnavailable) {
			t.Errorf("the other user's Get with the pool taken = %v, want DATABASE_UNAVAILABLE", other)
		}
	})
}

// TestGroupedWritesTakeNoPlaceOfTheirCaller: creates that wait for the
// write group (SQLite) hold no connection of their own, so one user's
// burst of creates is batched as before the bound, not refused: with one
// place per caller and no wait for it, 16 concurrent creates of one user
// all succeed.
func TestGroupedWritesTakeNoPlaceOfTheirCaller(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+t.TempDir()+"/grouped.db")
	if err := Migrate(t.Context(), db, []string{"user_cache"}); err != nil {
		t.Fatal(err)
	}
	l := callers.New(0, 1, nil)
	l.Wait = time.Nanosecond
	repo := NewCacheRepository(db.with(withCallerLimit(l)), "user_cache")
	if repo.writeGroup() == nil {
		t.Fatal("the SQLite repository has no write group")
	}
	burst := repo.For(domain.Caller{User: "burst"})
	errs := make(chan error, 16)
	for i := range 16 {
		go func() { errs <- burst.Create(t.Context(), testEntry(i), testNow, domain.Quota{}) }()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Errorf("a grouped create of one caller: %v", err)
		}
	}
}
