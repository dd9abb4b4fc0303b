package background

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/ports"
)

// Purger removes at most limit dead rows of one kind and reports how many.
type Purger struct {
	Name  string
	Purge func(ctx context.Context, now time.Time, limit int) (int, error)
}

// CachePurgers returns two purgers per cache repository of stores: its
// dead entries, and its expired idempotency records (README, "Idempotent
// retries"). Repositories sharing a database share its one table of
// records, which the first of them purges.
func CachePurgers(stores *application.Assignments) []Purger {
	var out []Purger
	for i, r := range stores.Repos() {
		out = append(out, Purger{Name: fmt.Sprintf("cache#%d", i), Purge: r.Purge},
			Purger{Name: fmt.Sprintf("idempotency#%d", i), Purge: r.PurgeIdempotency})
	}
	return out
}

// AuditPurger returns the sweeper's purger of the events older than
// retention, removed in batches like expired entries.
func AuditPurger(store ports.AuditLog, retention time.Duration) Purger {
	return Purger{Name: "audit", Purge: func(ctx context.Context, now time.Time, limit int) (int, error) {
		return store.PurgeEvents(ctx, now.Add(-retention), limit)
	}}
}

// Sweeper removes expired and deleted rows in the background, in bounded
// batches, so no sweep holds locks long enough to stall readers. Between
// two full batches it rests as long as the last one took, leaving at least
// half of the database's time to the readers. Several replicas may sweep
// one database at once; the repositories make sure no row is removed
// twice.
type Sweeper struct {
	Purgers  []Purger
	Clock    ports.Clock
	Batch    int
	Interval time.Duration
	Log      *slog.Logger
	// OnSwept, when set, learns how many rows each purger removed.
	OnSwept func(name string, n int)
	// Rest, when set, replaces the rest between two batches (tests); it is
	// given how long the last batch took.
	Rest func(ctx context.Context, d time.Duration)
}

// SweepOnce runs every purger until it has nothing left and returns how
// many rows were removed in all.
func (s *Sweeper) SweepOnce(ctx context.Context) (int, error) {
	batch := positive(s.Batch, 1000)
	rest := s.Rest
	if rest == nil {
		rest = sleep
	}
	total := 0
	for _, p := range s.Purgers {
		for {
			start := time.Now()
			n, err := p.Purge(ctx, s.Clock.Now(), batch)
			if err != nil {
				return total, fmt.Errorf("sweep %s: %w", p.Name, err)
			}
			total += n
			if n > 0 && s.OnSwept != nil {
				s.OnSwept(p.Name, n)
			}
			if n < batch || ctx.Err() != nil {
				break
			}
			rest(ctx, time.Since(start))
		}
	}
	return total, ctx.Err()
}

// positive returns v, or def when v is zero or less.
func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Run sweeps every Interval until ctx ends. Errors are logged, not fatal:
// the next round tries again.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(positive(s.Interval, time.Minute))
	defer t.Stop()
	for {
		if _, err := s.SweepOnce(ctx); err != nil && ctx.Err() == nil && s.Log != nil {
			s.Log.Warn("sweep failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
