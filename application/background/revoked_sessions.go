package background

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/ports"
)

// Defaults of RevokedSessionsOptions.
const (
	// DefaultRevocationPoll is how often a process reads the families
	// revoked since its last look: half the second docs/api.md allows.
	DefaultRevocationPoll = 500 * time.Millisecond
	// DefaultRevocationOverlap is how far each poll looks back before the
	// previous one began: a revocation may commit a little after the time
	// it wrote, and replicas' clocks must agree within this margin.
	DefaultRevocationOverlap = 10 * time.Second
)

// RevokedSessionsOptions configure RevokedSessions.
type RevokedSessionsOptions struct {
	Feed  ports.RevocationFeed
	Clock ports.Clock
	// AccessTTL plus Leeway is how long an access token of a revoked
	// family can still look valid, so how long the family is remembered.
	AccessTTL time.Duration
	Leeway    time.Duration
	// Poll is the interval of Run, and half the staleness after which
	// Revoked polls by itself (when nothing runs Run). Zero means
	// DefaultRevocationPoll.
	Poll time.Duration
	// Overlap is DefaultRevocationOverlap when zero.
	Overlap time.Duration
	Log     *slog.Logger
	// Changes, when set, is bumped whenever the set gains a family, so
	// open streams re-check their session at once.
	Changes *application.AuthChanges
}

// RevokedSessions is one process's view of the refresh families revoked
// lately, whose access tokens Authenticate refuses (ARCHITECTURE.md,
// "Authentication": sessions end everywhere). The request path reads a
// concurrent map; Poll reads the store once per Poll interval. A family is
// forgotten once no access token of it can still be valid (AccessTTL plus
// Leeway plus Overlap after it was first seen). A failed poll keeps what
// the set knew and is retried at the next interval.
type RevokedSessions struct {
	o    RevokedSessionsOptions
	keep time.Duration

	families sync.Map // family id -> time.Time after which it is forgotten
	size     atomic.Int64

	pollMu sync.Mutex
	// since is the lower bound of the next poll; guarded by pollMu.
	since time.Time
	// lastSweep is when forgotten families were last dropped; pollMu.
	lastSweep time.Time
	// nextPoll is the UnixNano instant after which Revoked polls itself.
	nextPoll atomic.Int64
	// failures logs when Run's polls start failing and when they recover.
	failures ports.FailureLog
}

var _ application.SessionRevocations = (*RevokedSessions)(nil)

// NewRevokedSessions returns the set, empty until its first poll (which
// reads back AccessTTL plus Leeway plus Overlap).
func NewRevokedSessions(o RevokedSessionsOptions) (*RevokedSessions, error) {
	if o.Feed == nil || o.Clock == nil {
		return nil, errors.New("revoked sessions need a revocation feed and a clock")
	}
	o.AccessTTL = positive(o.AccessTTL, application.DefaultAccessTTL)
	o.Poll = positive(o.Poll, DefaultRevocationPoll)
	o.Overlap = positive(o.Overlap, DefaultRevocationOverlap)
	o.Log = cmp.Or(o.Log, slog.New(slog.DiscardHandler))
	r := &RevokedSessions{o: o, keep: o.AccessTTL + max(o.Leeway, 0) + o.Overlap}
	now := o.Clock.Now()
	r.since = now.Add(-r.keep)
	r.lastSweep = now
	return r, nil
}

// Revoked reports whether family was revoked. When the set was not
// refreshed for two poll intervals (no Run loop), this call refreshes it
// first; concurrent callers go on with what the set holds.
func (r *RevokedSessions) Revoked(ctx context.Context, family string) bool {
	if family == "" {
		return false
	}
	if r.o.Clock.Now().UnixNano() >= r.nextPoll.Load() && r.pollMu.TryLock() {
		if r.o.Clock.Now().UnixNano() >= r.nextPoll.Load() {
			_ = r.pollLocked(ctx)
		}
		r.pollMu.Unlock()
	}
	if r.size.Load() == 0 {
		return false
	}
	_, ok := r.families.Load(family)
	return ok
}

// Add marks family revoked in this process at once: the revocation this
// process made itself is not left to the next poll.
func (r *RevokedSessions) Add(family string) {
	if family != "" && r.remember(family, r.o.Clock.Now()) {
		r.o.Changes.Bump()
	}
}

// Len returns how many families the set holds.
func (r *RevokedSessions) Len() int { return int(r.size.Load()) }

// Poll reads the families revoked since the previous poll (less the
// overlap) into the set, and drops the families no token can still need.
func (r *RevokedSessions) Poll(ctx context.Context) error {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	return r.pollLocked(ctx)
}

// Run polls every Poll interval until ctx is done.
func (r *RevokedSessions) Run(ctx context.Context) {
	tick := time.NewTicker(r.o.Poll)
	defer tick.Stop()
	for {
		r.failures.Record(ctx, r.o.Log, "read revoked sessions", r.Poll(ctx), r.o.Clock.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *RevokedSessions) pollLocked(ctx context.Context) error {
	start := r.o.Clock.Now()
	// Until this attempt succeeds, the request path retries a poll later.
	r.nextPoll.Store(start.Add(r.o.Poll).UnixNano())
	families, err := r.o.Feed.RevokedFamilies(ctx, r.since)
	if err != nil {
		return err
	}
	added := false
	for _, f := range families {
		added = r.remember(f, start) || added
	}
	if added {
		r.o.Changes.Bump()
	}
	r.since = start.Add(-r.o.Overlap)
	r.nextPoll.Store(start.Add(2 * r.o.Poll).UnixNano())
	if start.Sub(r.lastSweep) >= r.o.Overlap {
		r.sweep(start)
		r.lastSweep = start
	}
	return nil
}

// remember adds family, to be forgotten keep after now, and reports
// whether it is new; a family already held keeps its first deadline.
func (r *RevokedSessions) remember(family string, now time.Time) bool {
	if _, loaded := r.families.LoadOrStore(family, now.Add(r.keep)); !loaded {
		r.size.Add(1)
		return true
	}
	return false
}

// sweep drops the families whose deadline passed.
func (r *RevokedSessions) sweep(now time.Time) {
	r.families.Range(func(k, v any) bool {
		if now.After(v.(time.Time)) {
			if r.families.CompareAndDelete(k, v) {
				r.size.Add(-1)
			}
		}
		return true
	})
}
