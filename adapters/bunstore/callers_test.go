package bunstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

func TestCallerLimit(t *testing.T) {
	t.Parallel()
	l := &callerLimit{per: 2, wait: 10 * time.Millisecond, held: map[string]*callerSlots{}}
	a := ports.WithCaller(t.Context(), "user:a")
	b := ports.WithCaller(t.Context(), "user:b")
	take := func(ctx context.Context) (context.Context, func()) {
		t.Helper()
		ctx, release, err := l.acquire(ctx)
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		return ctx, func() { release(true) }
	}
	inA, releaseA1 := take(a)
	_, releaseA2 := take(a)
	t.Run("while the database answers nobody, the wait ends as an outage, not a 429", func(t *testing.T) {
		l.answered.Store(0)
		_, _, err := l.acquire(a)
		if !errors.Is(err, domain.ErrDatabaseUnavailable) || errors.Is(err, errCallerBusy) {
			t.Fatalf("third acquire of one caller, no answer meanwhile = %v, want DATABASE_UNAVAILABLE", err)
		}
	})
	t.Run("a caller past its places is refused with 429 and a pause", func(t *testing.T) {
		// The database answered during the wait (a time ahead of it
		// stands for an answer meanwhile): the caller's own calls kept
		// this one out.
		l.answered.Store(time.Now().Add(time.Hour).UnixNano())
		_, _, err := l.acquire(a)
		if !errors.Is(err, errCallerBusy) || domain.KindOf(err) != domain.KindTooMany || errCallerBusy.RetryAfter <= 0 {
			t.Fatalf("third acquire of one caller = %v, want TOO_MANY_REQUESTS with a Retry-After", err)
		}
	})
	t.Run("another caller is not affected", func(t *testing.T) {
		_, release := take(b)
		release()
	})
	t.Run("a nested call runs in its outer call's place", func(t *testing.T) {
		_, release := take(inA)
		release()
	})
	t.Run("calls without a caller are not bounded", func(t *testing.T) {
		for range 5 {
			if _, _, err := l.acquire(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("a released place lets the waiting caller in", func(t *testing.T) {
		l.wait = time.Minute
		got := make(chan error, 1)
		go func() {
			_, release, err := l.acquire(a)
			if err == nil {
				release(true)
			}
			got <- err
		}()
		releaseA1()
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a waiting call ends with its context", func(t *testing.T) {
		_, release := take(a) // a holds two places again
		defer release()
		ctx, cancel := context.WithCancel(a)
		cancel()
		if _, _, err := l.acquire(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("acquire with an ended context = %v, want context.Canceled", err)
		}
	})
	releaseA2()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) != 0 {
		t.Errorf("places of %d callers kept after every release", len(l.held))
	}
}

func TestNewCallerLimitTakesHalfThePool(t *testing.T) {
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
	t.Parallel()
	const pool = 4
	run := func(t *testing.T, db *DB, limit *callerLimit) (hogs []error, other error) {
		t.Helper()
		var entered sync.WaitGroup
		release := make(chan struct{})
		paging := listPaging{rows: 1, rowRead: func(ctx context.Context) {
			if ports.Caller(ctx) == "user:hog" {
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
		hog := ports.WithCaller(context.Background(), "user:hog")
		blocked := pool
		if limit != nil {
			blocked = limit.PerCaller()
		}
		entered.Add(blocked)
		results := make(chan error, pool)
		for range pool {
			go func() {
				_, err := repo.List(hog, ports.ListQuery{Limit: 1}, testNow, func(domain.Entry) error { return nil })
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
		_, other = repo.Get(ports.WithCaller(t.Context(), "user:other"), testEntry(1).ID, testNow)
		close(release)
		for range blocked {
			hogs = append(hogs, <-results)
		}
		return hogs, other
	}
	pagedDatabases(t, func(t *testing.T, db *DB) {
		t.Run("bounded, the other user is served and the hog's extra statements are 429", func(t *testing.T) {
			limit := newCallerLimit(db, 0, nil)
			limit.wait = 300 * time.Millisecond
			hogs, other := run(t, db, limit)
			if other != nil {
				t.Errorf("the other user's Get = %v, want the entry", other)
			}
			busy := 0
			for _, err := range hogs {
				switch {
				case err == nil:
				case errors.Is(err, errCallerBusy):
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

// TestACallerKeptOutForTheWholeBoundIs429: a call that waited its
// repository's whole timeout for its caller's place, while the database
// answered others, is refused as too many requests, not as a database
// outage, and runs no statement.
func TestACallerKeptOutForTheWholeBoundIs429(t *testing.T) {
	t.Parallel()
	l := &callerLimit{per: 1, held: map[string]*callerSlots{}}
	b := bounds{timeout: 30 * time.Millisecond, callers: l}
	a := ports.WithCaller(t.Context(), "user:a")
	_, release, err := l.acquire(a)
	if err != nil {
		t.Fatal(err)
	}
	defer release(true)
	// Another call is answered during the wait (ahead of it, to stand
	// for "meanwhile" without a race).
	l.answered.Store(time.Now().Add(time.Hour).UnixNano())
	ctx, done := b.enter(a)
	err = ctx.Err()
	if err == nil {
		t.Fatal("the refused call's context has not ended: its statements would run")
	}
	done(&err)
	if !errors.Is(err, errCallerBusy) || errors.Is(err, domain.ErrDatabaseUnavailable) {
		t.Errorf("refused call = %v, want TOO_MANY_REQUESTS alone", err)
	}
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
	l := &callerLimit{per: 1, wait: time.Nanosecond, held: map[string]*callerSlots{}}
	repo := NewCacheRepository(db.with(withCallerLimit(l)), "user_cache")
	if repo.writeGroup() == nil {
		t.Fatal("the SQLite repository has no write group")
	}
	ctx := ports.WithCaller(t.Context(), "user:burst")
	errs := make(chan error, 16)
	for i := range 16 {
		go func() { errs <- repo.Create(ctx, testEntry(i), testNow, domain.Quota{}) }()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Errorf("a grouped create of one caller: %v", err)
		}
	}
}
