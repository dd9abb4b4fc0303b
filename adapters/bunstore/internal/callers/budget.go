package callers

import (
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Budget is each caller's budget of database time on one replica, a token
// bucket: it refills at rate seconds of database time per second, up to
// burst. What is metered is the time each of the caller's calls holds a
// connection (a token of the Limit's pool), not the wait for one; a
// grouped write is charged its time in the group (Charge). A call is
// charged when it ends, so work in flight is never cut; the caller's next
// request is refused while its bucket is empty (Spent, ginhttp's check
// through ports.CallerBudget). ARCHITECTURE.md, "Per-caller caps".
type Budget struct {
	rate  float64 // seconds of database time per second
	burst time.Duration
	clock ports.Clock

	mu sync.Mutex
	// full is when each caller's bucket is full again; a caller is in the
	// map only while its bucket is not full, so memory follows the
	// callers of the last moments, not every caller ever seen.
	full    map[domain.Caller]time.Time
	charges int
}

// NewBudget returns the budget of rate database time per second per
// caller, with a burst of burst; a rate or burst of zero or less is no
// budget (nil, which admits every caller). clock is the time it refills
// by (nil: the system clock).
func NewBudget(rate, burst time.Duration, clock ports.Clock) *Budget {
	if rate <= 0 || burst <= 0 {
		return nil
	}
	return &Budget{rate: rate.Seconds(), burst: burst, clock: clock, full: map[domain.Caller]time.Time{}}
}

func (b *Budget) now() time.Time {
	if b.clock == nil {
		return time.Now()
	}
	return b.clock.Now()
}

// charge takes d of database time from caller's bucket.
func (b *Budget) charge(caller domain.Caller, d time.Duration) {
	if b == nil || caller == (domain.Caller{}) || d <= 0 {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	full := b.full[caller]
	if full.Before(now) {
		full = now
	}
	b.full[caller] = full.Add(time.Duration(float64(d) / b.rate))
	// Now and then forget the callers whose buckets are full again.
	if b.charges++; b.charges%1024 == 0 {
		for c, f := range b.full {
			if !f.After(now) {
				delete(b.full, c)
			}
		}
	}
}

// Spent returns how long until caller's bucket holds database time again:
// zero while it does. The bucket is empty once the calls charged to it
// exceed the burst plus what it refilled meanwhile.
func (b *Budget) Spent(caller domain.Caller) time.Duration {
	if b == nil || caller == (domain.Caller{}) {
		return 0
	}
	now := b.now()
	b.mu.Lock()
	full, ok := b.full[caller]
	b.mu.Unlock()
	if !ok {
		return 0
	}
	// The bucket holds something again once it is less than burst from
	// full, which takes burst/rate seconds of refilling.
	wait := full.Sub(now) - time.Duration(float64(b.burst)/b.rate)
	return max(wait, 0)
}
