package application_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// recordingLog remembers what the replay asked the log for.
type recordingLog struct {
	*memstore.ChangeLog
	mu      sync.Mutex
	queries []ports.ChangeQuery
	rows    int
	// callers are those the log was bound to (For), in order.
	callers []domain.Caller
}

// For records caller and keeps the recording: memory bounds no caller.
func (l *recordingLog) For(caller domain.Caller) ports.ChangeLog {
	l.mu.Lock()
	l.callers = append(l.callers, caller)
	l.mu.Unlock()
	return l
}

func (l *recordingLog) ChangesOf(ctx context.Context, q ports.ChangeQuery) ([]domain.Change, error) {
	page, err := l.ChangeLog.ChangesOf(ctx, q)
	l.mu.Lock()
	l.queries = append(l.queries, q)
	l.rows += len(page)
	l.mu.Unlock()
	return page, err
}

// A resuming owner's replay asks the log for its own changes of its
// assignment only, and reads no other user's (ports.ChangeLog.ChangesOf);
// it gets them all, in order, over several pages.
func TestAResumingOwnerReplaysOnlyItsOwnChanges(t *testing.T) {
	t.Parallel()
	clock := newClock()
	log := &recordingLog{ChangeLog: memstore.NewChangeLog()}
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: clock, Poll: 10 * time.Millisecond, Buffer: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	stores, err := application.NewAssignments(application.Assignment{Name: "mine", EntityKey: "mine", Table: "mine",
		Repo: feed.Observe(log.Repository("mine")), Policy: domain.PolicyOwner})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: &seqIDs{}, Feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	cache := application.NewCache(ops)
	all, err := ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System()})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	// Alice's 600 changes (two replay pages) among Bob's 1200.
	var mine []string
	var last string
	for i := range 1800 {
		owner := feedBob
		if i%3 == 0 {
			owner = feedAlice
		}
		e, err := cache.Create(t.Context(), "mine", application.CacheInput{Key: "k" + strconv.Itoa(i), Type: "t",
			AssigneeID: owner, Data: []byte(`"v"`)})
		if err != nil {
			t.Fatal(err)
		}
		if owner == feedAlice {
			mine = append(mine, e.ID)
		}
		last = e.ID
	}
	// Once the feed's reader has read them all, a resume from 0 replays
	// them from the log.
	for {
		ev, err := next(t, all)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Change.Entry.ID == last {
			break
		}
	}
	since := int64(0)
	sub, err := ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine",
		Actor: domain.AsPrincipal(domain.Principal{ID: feedAlice}), Since: &since})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	rev := int64(0)
	for i, id := range mine {
		ev, err := next(t, sub)
		if err != nil || ev.Change.Entry.ID != id || ev.Change.Rev <= rev {
			t.Fatalf("replayed change %d: %v %s rev %d, want %s after rev %d", i, err, ev.Change.Entry.ID, ev.Change.Rev, id, rev)
		}
		rev = ev.Change.Rev
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.queries) < 2 {
		t.Fatalf("the replay of %d changes asked the log %d times, want a page at a time", len(mine), len(log.queries))
	}
	for _, q := range log.queries {
		if q.Entity != "mine" || q.AssigneeID != feedAlice || q.Limit <= 0 {
			t.Fatalf("the replay asked the log for %+v, want alice's changes of mine", q)
		}
	}
	if log.rows != len(mine) {
		t.Fatalf("the replay read %d changes from the log, want alice's %d only", log.rows, len(mine))
	}
	// The replay is alice's database work (README, "Fair share of the
	// database").
	if !slices.Contains(log.callers, domain.Caller{User: feedAlice}) {
		t.Fatalf("the log was bound to %v, want alice among them", log.callers)
	}
}
