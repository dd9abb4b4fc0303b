package background_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
)

func TestSweeper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("every dead row is removed, in batches no larger than asked", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner)
		for i := range 25 {
			in := input("k"+string(rune('a'+i)), alice)
			in.ExpiresIn = str("1s")
			if _, err := env.api.Create(ctx, "user", in); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := env.api.Create(ctx, "user", input("keep", alice)); err != nil {
			t.Fatal(err)
		}
		env.clock.Advance(2 * time.Second)
		var batches []int
		s := &background.Sweeper{Purgers: background.CachePurgers(env.uc.Assignments), Clock: env.clock, Batch: 10,
			OnSwept: func(_ string, n int) { batches = append(batches, n) }}
		n, err := s.SweepOnce(ctx)
		if err != nil || n != 25 {
			t.Fatalf("swept %d, %v; want 25", n, err)
		}
		for _, b := range batches {
			if b > 10 {
				t.Fatalf("a batch removed %d rows, more than 10", b)
			}
		}
		if n, _ := s.SweepOnce(ctx); n != 0 {
			t.Fatalf("a second sweep removed %d", n)
		}
		if left, _ := env.api.GetAssignedCaches(ctx, "user", alice); len(left) != 1 {
			t.Fatalf("%d live entries left, want 1", len(left))
		}
	})

	t.Run("between two full batches it rests as long as the last took", func(t *testing.T) {
		t.Parallel()
		left := 25
		slow := background.Purger{Name: "slow", Purge: func(_ context.Context, _ time.Time, limit int) (int, error) {
			time.Sleep(2 * time.Millisecond)
			n := min(limit, left)
			left -= n
			return n, nil
		}}
		var rests []time.Duration
		s := &background.Sweeper{Purgers: []background.Purger{slow}, Clock: newClock(), Batch: 10,
			Rest: func(_ context.Context, d time.Duration) { rests = append(rests, d) }}
		if n, err := s.SweepOnce(ctx); err != nil || n != 25 {
			t.Fatalf("swept %d, %v; want 25", n, err)
		}
		// Batches of 10, 10 and 5: a rest after each full one, none after
		// the last, which found the backlog cleared.
		if len(rests) != 2 {
			t.Fatalf("rested %d times, want 2", len(rests))
		}
		for _, d := range rests {
			if d < 2*time.Millisecond {
				t.Fatalf("rested %v after a batch of at least 2ms", d)
			}
		}
	})

	t.Run("a failing purger is reported and Run keeps going until cancelled", func(t *testing.T) {
		t.Parallel()
		// The purger cancels Run at its fifth call; the deadline only stops
		// a Run that does not keep going (a fixed 50 ms window could pass
		// with no tick on a loaded machine).
		runCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		calls := 0
		boom := background.Purger{Name: "boom", Purge: func(context.Context, time.Time, int) (int, error) {
			calls++
			if calls == 5 {
				cancel()
			}
			return 0, errors.New("database gone")
		}}
		s := &background.Sweeper{Purgers: []background.Purger{boom}, Clock: newClock(), Interval: time.Millisecond}
		if _, err := s.SweepOnce(ctx); err == nil {
			t.Fatal("the purger's error was lost")
		}
		s.Run(runCtx)
		if calls < 5 || !errors.Is(runCtx.Err(), context.Canceled) {
			t.Fatalf("Run tried %d times at a 1 ms interval and ended with %v; want 5 tries, then an end at the cancel",
				calls, runCtx.Err())
		}
	})

	t.Run("the sweeper removes the records of keys past their lifetime", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner)
		if _, err := env.api.Create(ctx, "user", input("k", alice), application.WithIdempotencyKey("k-1")); err != nil {
			t.Fatal(err)
		}
		swept := map[string]int{}
		s := &background.Sweeper{Purgers: background.CachePurgers(env.uc.Assignments), Clock: env.clock,
			OnSwept: func(name string, n int) { swept[name] += n }}
		if _, err := s.SweepOnce(ctx); err != nil || swept["idempotency#0"] != 0 {
			t.Fatalf("a sweep within the lifetime removed %d records (%v)", swept["idempotency#0"], err)
		}
		env.clock.Advance(application.IdempotencyLifetime)
		if _, err := s.SweepOnce(ctx); err != nil || swept["idempotency#0"] != 1 {
			t.Fatalf("a sweep after the lifetime removed %d records (%v), want 1", swept["idempotency#0"], err)
		}
	})
}
