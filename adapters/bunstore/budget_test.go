package bunstore

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

func TestBudgetIsATokenBucketPerCaller(t *testing.T) {
	t.Parallel()
	clock := system.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	// Half a second of database time per second, two seconds at once.
	b := NewBudget(500*time.Millisecond, 2*time.Second, clock)

	t.Run("a caller within its burst has time left", func(t *testing.T) {
		b.charge("user:a", 1500*time.Millisecond)
		if got := b.Spent("user:a"); got != 0 {
			t.Fatalf("Spent after 1.5 s of a 2 s burst = %v, want 0", got)
		}
	})
	t.Run("past its burst it is spent until it refills enough", func(t *testing.T) {
		// 1.5 + 1.5 = 3 s charged: 1 s over the burst, refilled at 0.5 s a second.
		b.charge("user:a", 1500*time.Millisecond)
		if got := b.Spent("user:a"); got != 2*time.Second {
			t.Fatalf("Spent 1 s past the burst = %v, want 2s", got)
		}
		clock.Advance(1500 * time.Millisecond)
		if got := b.Spent("user:a"); got != 500*time.Millisecond {
			t.Fatalf("Spent 1.5 s later = %v, want 500ms", got)
		}
	})
	t.Run("another caller is not affected", func(t *testing.T) {
		if got := b.Spent("user:b"); got != 0 {
			t.Fatalf("Spent of a caller charged nothing = %v, want 0", got)
		}
	})
	t.Run("it refills", func(t *testing.T) {
		clock.Advance(500 * time.Millisecond)
		if got := b.Spent("user:a"); got != 0 {
			t.Fatalf("Spent once refilled to the burst = %v, want 0", got)
		}
		// Full again after the rest of its debt, and forgotten then.
		clock.Advance(2 * time.Second / 500 * 1000)
		for range 1024 {
			b.charge("user:c", time.Microsecond)
		}
		b.mu.Lock()
		_, kept := b.full["user:a"]
		b.mu.Unlock()
		if kept {
			t.Error("a caller whose bucket is full again is still remembered")
		}
	})
	t.Run("no rate or no burst is no budget", func(t *testing.T) {
		for _, nb := range []*Budget{NewBudget(0, time.Second, clock), NewBudget(time.Second, 0, clock)} {
			nb.charge("user:a", time.Hour)
			if nb != nil || nb.Spent("user:a") != 0 {
				t.Errorf("budget %+v, want nil, which admits everyone", nb)
			}
		}
	})
}

// TestCallsChargeTheirCallersBudget: what a caller's repository calls
// take on a connection is charged to that caller when they end, never to
// another caller or to a call without one.
func TestCallsChargeTheirCallersBudget(t *testing.T) {
	t.Parallel()
	pagedDatabases(t, func(t *testing.T, db *DB) {
		// A budget of one nanosecond a second and at once: any call
		// spends it.
		budget := NewBudget(time.Nanosecond, time.Nanosecond, nil)
		repo := pagedRepo(t, db, "budget_cache", listPaging{}, withCallerLimit(newCallerLimit(db, 0, budget)))
		alice := ports.WithCaller(t.Context(), "user:alice")
		if err := repo.Create(alice, testEntry(1), testNow, domain.Quota{}); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Get(t.Context(), testEntry(1).ID, testNow); err != nil {
			t.Fatal(err)
		}
		if got := budget.Spent("user:alice"); got != 0 {
			t.Fatalf("alice spent %v after only a grouped write of hers and a call without a caller, want 0", got)
		}
		if _, err := repo.Get(alice, "no-such-id", testNow); !errors.Is(err, domain.ErrCacheNotFound) {
			t.Fatalf("Get = %v, want not found", err)
		}
		if got := budget.Spent("user:alice"); got <= 0 {
			t.Errorf("alice's budget after her call = %v left to wait, want it spent", got)
		}
		if got := budget.Spent("user:bob"); got != 0 {
			t.Errorf("bob's budget after alice's call: spent for %v, want untouched", got)
		}
	})
}

// TestAWaitForSQLitesWriterIsNotChargedToTheCaller holds SQLite's write
// gate while a caller's call waits for it: the wait is the other
// writer's time, so the caller's budget (a tenth of a second at once)
// stays unspent.
func TestAWaitForSQLitesWriterIsNotChargedToTheCaller(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "gate.db"))
	budget := NewBudget(100*time.Millisecond, 100*time.Millisecond, nil)
	l := newCallerLimit(db, 0, budget)
	gate := db.gate
	leaveOther, err := enterWriter(t.Context(), gate)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, leaveOther)
	ctx, release, err := l.acquire(ports.WithCaller(t.Context(), "user:alice"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	leave, err := enterWriter(ctx, gate)
	if err != nil {
		t.Fatal(err)
	}
	leave()
	release(true)
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("the call waited %v for the gate, want about 300ms", waited)
	}
	if got := budget.Spent("user:alice"); got != 0 {
		t.Errorf("alice's budget after a call that only waited for the writer: spent for %v, want untouched", got)
	}
}
