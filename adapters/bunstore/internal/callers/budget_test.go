package callers

import (
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/domain"
)

func TestBudgetIsATokenBucketPerCaller(t *testing.T) {
	t.Parallel()
	clock := system.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	// Half a second of database time per second, two seconds at once.
	b := NewBudget(500*time.Millisecond, 2*time.Second, clock)

	t.Run("a caller within its burst has time left", func(t *testing.T) {
		b.charge(domain.Caller{User: "a"}, 1500*time.Millisecond)
		if got := b.Spent(domain.Caller{User: "a"}); got != 0 {
			t.Fatalf("Spent after 1.5 s of a 2 s burst = %v, want 0", got)
		}
	})
	t.Run("past its burst it is spent until it refills enough", func(t *testing.T) {
		// 1.5 + 1.5 = 3 s charged: 1 s over the burst, refilled at 0.5 s a second.
		b.charge(domain.Caller{User: "a"}, 1500*time.Millisecond)
		if got := b.Spent(domain.Caller{User: "a"}); got != 2*time.Second {
			t.Fatalf("Spent 1 s past the burst = %v, want 2s", got)
		}
		clock.Advance(1500 * time.Millisecond)
		if got := b.Spent(domain.Caller{User: "a"}); got != 500*time.Millisecond {
			t.Fatalf("Spent 1.5 s later = %v, want 500ms", got)
		}
	})
	t.Run("another caller is not affected", func(t *testing.T) {
		if got := b.Spent(domain.Caller{User: "b"}); got != 0 {
			t.Fatalf("Spent of a caller charged nothing = %v, want 0", got)
		}
	})
	t.Run("it refills", func(t *testing.T) {
		clock.Advance(500 * time.Millisecond)
		if got := b.Spent(domain.Caller{User: "a"}); got != 0 {
			t.Fatalf("Spent once refilled to the burst = %v, want 0", got)
		}
		// Full again after the rest of its debt, and forgotten then.
		clock.Advance(2 * time.Second / 500 * 1000)
		for range 1024 {
			b.charge(domain.Caller{User: "c"}, time.Microsecond)
		}
		b.mu.Lock()
		_, kept := b.full[domain.Caller{User: "a"}]
		b.mu.Unlock()
		if kept {
			t.Error("a caller whose bucket is full again is still remembered")
		}
	})
	t.Run("no rate or no burst is no budget", func(t *testing.T) {
		for _, nb := range []*Budget{NewBudget(0, time.Second, clock), NewBudget(time.Second, 0, clock)} {
			nb.charge(domain.Caller{User: "a"}, time.Hour)
			if nb != nil || nb.Spent(domain.Caller{User: "a"}) != 0 {
				t.Errorf("budget %+v, want nil, which admits everyone", nb)
			}
		}
	})
}
