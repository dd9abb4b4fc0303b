package callers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
)

func TestCallerLimit(t *testing.T) {
	t.Parallel()
	l := &Limit{per: 2, Wait: 10 * time.Millisecond, held: map[domain.Caller]*callerSlots{}}
	a, b := domain.Caller{User: "a"}, domain.Caller{User: "b"}
	take := func(ctx context.Context, c domain.Caller) func() {
		t.Helper()
		call, err := l.Acquire(ctx, c)
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		return func() { call.Release(true) }
	}
	releaseA1 := take(t.Context(), a)
	releaseA2 := take(t.Context(), a)
	t.Run("while the database answers nobody, the wait ends as an outage, not a 429", func(t *testing.T) {
		l.answered.Store(0)
		_, err := l.Acquire(t.Context(), a)
		if !errors.Is(err, domain.ErrDatabaseUnavailable) || errors.Is(err, ErrCallerBusy) {
			t.Fatalf("third acquire of one caller, no answer meanwhile = %v, want DATABASE_UNAVAILABLE", err)
		}
	})
	t.Run("a caller past its places is refused with 429 and a pause", func(t *testing.T) {
		// The database answered during the wait (a time ahead of it
		// stands for an answer meanwhile): the caller's own calls kept
		// this one out.
		l.answered.Store(time.Now().Add(time.Hour).UnixNano())
		_, err := l.Acquire(t.Context(), a)
		if !errors.Is(err, ErrCallerBusy) || domain.KindOf(err) != domain.KindTooMany || ErrCallerBusy.RetryAfter <= 0 {
			t.Fatalf("third acquire of one caller = %v, want TOO_MANY_REQUESTS with a Retry-After", err)
		}
	})
	t.Run("another caller is not affected", func(t *testing.T) {
		release := take(t.Context(), b)
		release()
	})
	t.Run("a grouped call takes no place", func(t *testing.T) {
		l.Grouped(a).Release(true)
	})
	t.Run("calls without a caller are not bounded", func(t *testing.T) {
		for range 5 {
			if _, err := l.Acquire(t.Context(), domain.Caller{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("a released place lets the waiting caller in", func(t *testing.T) {
		l.Wait = time.Minute
		got := make(chan error, 1)
		go func() {
			call, err := l.Acquire(t.Context(), a)
			if err == nil {
				call.Release(true)
			}
			got <- err
		}()
		releaseA1()
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a waiting call ends with its context", func(t *testing.T) {
		release := take(t.Context(), a) // a holds two places again
		defer release()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := l.Acquire(ctx, a); !errors.Is(err, context.Canceled) {
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

// TestACallerKeptOutForTheWholeBoundIs429: a call that waited its whole
// bound for its caller's place, while the database answered others, is
// refused as too many requests, not as a database outage.
func TestACallerKeptOutForTheWholeBoundIs429(t *testing.T) {
	t.Parallel()
	l := &Limit{per: 1, held: map[domain.Caller]*callerSlots{}}
	a := domain.Caller{User: "a"}
	call, err := l.Acquire(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	defer call.Release(true)
	// Another call is answered during the wait (ahead of it, to stand
	// for "meanwhile" without a race).
	l.answered.Store(time.Now().Add(time.Hour).UnixNano())
	bounded, cancel := context.WithTimeoutCause(t.Context(), 30*time.Millisecond, dberr.ErrPastBound)
	defer cancel()
	_, err = l.Acquire(bounded, a)
	if !errors.Is(err, ErrCallerBusy) || errors.Is(err, domain.ErrDatabaseUnavailable) {
		t.Errorf("refused call = %v, want TOO_MANY_REQUESTS alone", err)
	}
}
