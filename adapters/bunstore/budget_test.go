package bunstore

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/cachegate/cachegate/domain"
)

// TestCallsChargeTheirCallersBudget: what a caller's repository calls
// take on a connection is charged to that caller when they end, never to
// another caller or to a call without one; a write grouped at SQLite's
// write gate (a create) is charged its time in its group
// (callers.Call.Charge), a create batched on PostgreSQL, which holds no one
// writer, is not.
func TestCallsChargeTheirCallersBudget(t *testing.T) {
	t.Parallel()
	pagedDatabases(t, func(t *testing.T, db *DB) {
		// A budget of one nanosecond a second and at once: any call
		// spends it.
		budget := NewBudget(time.Nanosecond, time.Nanosecond, nil)
		repo := pagedRepo(t, db, "budget_cache", listPaging{}, withCallerLimit(newCallerLimit(db, 0, budget)))
		alice := repo.For(domain.Caller{User: "alice"})
		carol := repo.For(domain.Caller{User: "carol"})
		if err := carol.Create(t.Context(), testEntry(1), testNow, domain.Quota{}); err != nil {
			t.Fatal(err)
		}
		if got := budget.Spent(domain.Caller{User: "carol"}); db.gate != nil && got <= 0 {
			t.Errorf("carol's budget after her create grouped at the write gate = %v left to wait, want it spent", got)
		} else if db.gate == nil && got != 0 {
			t.Errorf("carol's budget after her create batched on PostgreSQL: spent for %v, want untouched", got)
		}
		if _, err := repo.Get(t.Context(), testEntry(1).ID, testNow); err != nil {
			t.Fatal(err)
		}
		if got := budget.Spent(domain.Caller{User: "alice"}); got != 0 {
			t.Fatalf("alice spent %v after only a call without a caller and carol's create, want 0", got)
		}
		if _, err := alice.Get(t.Context(), "no-such-id", testNow); !errors.Is(err, domain.ErrCacheNotFound) {
			t.Fatalf("Get = %v, want not found", err)
		}
		if got := budget.Spent(domain.Caller{User: "alice"}); got <= 0 {
			t.Errorf("alice's budget after her call = %v left to wait, want it spent", got)
		}
		if got := budget.Spent(domain.Caller{User: "bob"}); got != 0 {
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
	leaveOther, err := writegate.Enter(t.Context(), gate, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, leaveOther)
	call, err := l.Acquire(t.Context(), domain.Caller{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	leave, err := writegate.Enter(t.Context(), gate, call)
	if err != nil {
		t.Fatal(err)
	}
	leave()
	call.Release(true)
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("the call waited %v for the gate, want about 300ms", waited)
	}
	if got := budget.Spent(domain.Caller{User: "alice"}); got != 0 {
		t.Errorf("alice's budget after a call that only waited for the writer: spent for %v, want untouched", got)
	}
}
