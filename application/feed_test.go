package application_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// feedFixture is a cache with a running feed over an in-memory log: one
// owner-policy assignment "mine".
type feedFixture struct {
	cache *application.Cache
	ops   *application.CacheOperations
	log   *memstore.ChangeLog
	feed  *background.Feed
	stop  func()
}

func newFeedFixture(t *testing.T, buffer int) *feedFixture {
	t.Helper()
	clock := newClock()
	log := memstore.NewChangeLog()
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: clock, Buffer: buffer, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	stores, err := application.NewAssignments(application.Assignment{Name: "mine", EntityKey: "mine", Table: "mine",
		Repo: feed.Observe(log.Repository("mine")), Policy: domain.PolicyOwner})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: &seqIDs{}, Feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	return &feedFixture{cache: application.NewCache(ops), ops: ops, log: log, feed: feed, stop: stop}
}

const (
	feedAlice = "a11ce000-0000-4000-8000-000000000001"
	feedBob   = "b0b00000-0000-4000-8000-000000000002"
)

func (f *feedFixture) create(t *testing.T, assignee, key string) domain.Entry {
	t.Helper()
	e, err := f.cache.Create(t.Context(), "mine", application.CacheInput{Key: key, Type: "t", AssigneeID: assignee, Data: []byte(`"v"`)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func next(t *testing.T, s *application.Subscription) (application.FeedEvent, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	return s.Next(ctx)
}

func asUser(id string) application.QueryOption {
	return application.AsActor(domain.AsPrincipal(domain.Principal{ID: id}))
}

func TestWatchSeesOnlyTheActorsEntriesUnderTheOwnerPolicy(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, 0)
	ctx, cancel := context.WithCancel(t.Context())
	events := make(chan application.FeedEvent, 10)
	ended := make(chan error, 1)
	go func() {
		for ev, err := range f.cache.Watch(ctx, "mine", application.WatchFilter{}, asUser(feedAlice)) {
			if err != nil {
				ended <- err
				return
			}
			events <- ev
		}
		ended <- nil
	}()
	// Wait until the subscription exists: the feed counts it.
	deadline := time.Now().Add(5 * time.Second)
	for probe := 0; ; probe++ {
		e := f.create(t, feedAlice, "probe"+strconv.Itoa(probe))
		select {
		case ev := <-events:
			if ev.Change.Entry.ID != e.ID {
				t.Fatalf("first event %s, want %s", ev.Change.Entry.ID, e.ID)
			}
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no event for feedAlice's own entry")
			}
			continue
		}
		break
	}
	f.create(t, feedBob, "bobs")
	mine := f.create(t, feedAlice, "alices")
	select {
	case ev := <-events:
		if ev.Change.Entry.ID != mine.ID || ev.Change.Kind != domain.ChangeCreated {
			t.Fatalf("feedAlice got %s %s, want created %s", ev.Change.Kind, ev.Change.Entry.ID, mine.ID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	cancel()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("Watch ended with %v on cancel, want a clean end", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not end when its context was canceled")
	}
}

func TestASubscriberThatFallsBehindIsDroppedAndResumesWithoutGap(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, 2)
	sub, err := f.ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var ids []string
	for i := range 5 {
		ids = append(ids, f.create(t, feedAlice, string(rune('a'+i))).ID)
	}
	select {
	case <-sub.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a subscriber 5 changes behind with a buffer of 2 was not dropped")
	}
	if _, err := next(t, sub); !errors.Is(err, application.ErrFeedLagging) {
		t.Fatalf("Next after the drop = %v, want ErrFeedLagging", err)
	}
	since := int64(0)
	resumed, err := f.ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System(), Since: &since})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	last := int64(0)
	for _, id := range ids {
		ev, err := next(t, resumed)
		if err != nil || ev.Change.Entry.ID != id || ev.Change.Rev <= last {
			t.Fatalf("resumed: %v %s rev %d, want %s after rev %d", err, ev.Change.Entry.ID, ev.Change.Rev, id, last)
		}
		last = ev.Change.Rev
	}
}

func TestResumingBeforeTheRetainedChangesStartsWithAReset(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, 0)
	for i := range 3 {
		f.create(t, feedAlice, string(rune('a'+i)))
	}
	if n, err := f.log.Prune(t.Context(), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), 2); err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v", n, err)
	}
	since := int64(0)
	sub, err := f.ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System(), Since: &since})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ev, err := next(t, sub)
	if err != nil || !ev.Reset || ev.Oldest != 3 {
		t.Fatalf("first event %+v, %v; want a reset with oldest 3", ev, err)
	}
	after := f.create(t, feedAlice, "after")
	if ev, err := next(t, sub); err != nil || ev.Change.Entry.ID != after.ID {
		t.Fatalf("after the reset: %+v, %v; want the next change", ev, err)
	}
}

func TestStoppingTheFeedEndsSubscriptionsAndRefusesNewOnes(t *testing.T) {
	t.Parallel()
	f := newFeedFixture(t, 0)
	sub, err := f.ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System()})
	if err != nil {
		t.Fatal(err)
	}
	f.stop()
	if _, err := next(t, sub); !errors.Is(err, application.ErrFeedClosed) {
		t.Fatalf("Next after stop = %v, want ErrFeedClosed", err)
	}
	if _, err := f.ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System()}); !errors.Is(err, application.ErrFeedClosed) {
		t.Fatalf("Watch after stop = %v, want ErrFeedClosed", err)
	}
	if _, err := f.ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.Anonymous()}); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("anonymous Watch of an owner assignment = %v, want ErrUnauthenticated", err)
	}
}

// A change committed before a subscription without a revision is not
// "the next change", even when the feed's reader has not read it yet.
func TestASubscriptionWithoutARevisionSkipsChangesCommittedBeforeIt(t *testing.T) {
	t.Parallel()
	clock := newClock()
	log := memstore.NewChangeLog()
	// The reader reads on a poke only: the log does not wake it and the
	// poll is an hour.
	feed, err := background.NewFeed(background.FeedConfig{Log: sleepyLog{log}, Clock: clock, Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	ids := &seqIDs{}
	build := func(repo ports.CacheRepository) (*application.Cache, *application.CacheOperations) {
		stores, err := application.NewAssignments(application.Assignment{Name: "mine", EntityKey: "mine", Table: "mine",
			Repo: repo, Policy: domain.PolicyPublic})
		if err != nil {
			t.Fatal(err)
		}
		ops, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: ids, Feed: feed})
		if err != nil {
			t.Fatal(err)
		}
		return application.NewCache(ops), ops
	}
	// unseen writes without waking the reader (another replica's write,
	// as far as this process knows); seen pokes it.
	unseen, _ := build(log.Repository("mine"))
	seen, seenOps := build(feed.Observe(log.Repository("mine")))
	create := func(c *application.Cache, key string) domain.Entry {
		t.Helper()
		e, err := c.Create(t.Context(), "mine", application.CacheInput{Key: key, Type: "t", AssigneeID: feedAlice, Data: []byte(`"v"`)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// Once the reader has started (a subscription waits for that), a
	// change it is not told about.
	first, err := seenOps.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System()})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	create(unseen, "before")
	sub, err := seenOps.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	after := create(seen, "after")
	ev, err := next(t, sub)
	if err != nil || ev.Change.Entry.ID != after.ID || ev.Change.Entry.Key != "after" {
		t.Fatalf("first event %s %q, %v; want the change made after subscribing (%s)", ev.Change.Kind, ev.Change.Entry.Key, err, after.ID)
	}
}

// sleepyLog is a change log that never wakes its reader.
type sleepyLog struct{ ports.ChangeLog }

func (sleepyLog) Wake() <-chan struct{} { return nil }

// For keeps the log asleep.
func (l sleepyLog) For(caller domain.Caller) ports.ChangeLog {
	return sleepyLog{l.ChangeLog.For(caller)}
}
