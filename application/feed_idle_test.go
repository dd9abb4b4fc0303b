package application_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// readCountingLog counts the feed's reads of the log. It never wakes the
// reader, so only pokes (the writes of this process, a subscription)
// make it read; a subscription's own replay (For) is not counted.
type readCountingLog struct {
	*memstore.ChangeLog
	changes, heads atomic.Int64
	// hold, when set, stops the next Head: it receives a channel once
	// Head has read the head, and Head returns when that is closed.
	hold atomic.Pointer[chan chan struct{}]
}

func (l *readCountingLog) Changes(ctx context.Context, after int64, limit int) ([]domain.Change, error) {
	l.changes.Add(1)
	return l.ChangeLog.Changes(ctx, after, limit)
}

func (l *readCountingLog) Head(ctx context.Context) (int64, error) {
	l.heads.Add(1)
	h, err := l.ChangeLog.Head(ctx)
	if hold := l.hold.Swap(nil); hold != nil {
		release := make(chan struct{})
		*hold <- release
		<-release
	}
	return h, err
}

func (*readCountingLog) Wake() <-chan struct{} { return nil }

func (l *readCountingLog) For(domain.Caller) ports.ChangeLog { return l.ChangeLog }

// idleFixture is a running feed over a readCountingLog that reads on a poke
// only (the poll is an hour), and a cache whose writes poke it.
func idleFixture(t *testing.T) (*readCountingLog, *background.Feed, *application.Cache, *application.CacheOperations) {
	t.Helper()
	clock := newClock()
	log := &readCountingLog{ChangeLog: memstore.NewChangeLog()}
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: clock, Poll: time.Hour, Buffer: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	stores, err := application.NewAssignments(application.Assignment{Name: "mine", EntityKey: "mine", Table: "mine",
		Repo: feed.Observe(log.Repository("mine")), Policy: domain.PolicyPublic})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: &seqIDs{}, Feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	return log, feed, application.NewCache(ops), ops
}

// A subscription that registers while the idle reader is between reading
// the head and moving its position there still gets the changes up to
// that head: the reader reads them instead of skipping them.
func TestASubscriptionDuringAnIdleCatchUpGetsTheChangesItSkips(t *testing.T) {
	t.Parallel()
	log, feed, _, ops := idleFixture(t)
	// Twice: the first read, at the reader's start, may leave the
	// CatchUp's poke behind, and the reader lets that wake-up pass
	// unread (stale, below); the second read, woken by its own poke,
	// usually leaves none.
	for range 2 {
		if err := feed.CatchUp(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// Changes the reader is not told of (another replica's).
	unseen, err := application.NewAssignments(application.Assignment{Name: "mine", EntityKey: "mine", Table: "mine",
		Repo: log.Repository("mine"), Policy: domain.PolicyPublic})
	if err != nil {
		t.Fatal(err)
	}
	unseenOps, err := application.NewCacheOperations(application.CacheConfig{Assignments: unseen, Clock: newClock(), IDs: &seqIDs{}})
	if err != nil {
		t.Fatal(err)
	}
	unseenCache := application.NewCache(unseenOps)
	for i := range 3 {
		createKey(t, unseenCache, "unseen"+strconv.Itoa(i))
	}
	hold := make(chan chan struct{}, 1)
	log.hold.Store(&hold)
	caughtUp := make(chan error, 1)
	go func() { caughtUp <- feed.CatchUp(t.Context()) }()
	release := <-hold
	// The reader has read head 3 and has not moved yet: a resume from 0
	// registers at the old position. Unless the reader let a wake-up
	// pass unread before (the redundant poke of the CatchUp above, when
	// the read that served it had already begun): then Subscribe first
	// waits for a read of its own, which the held one keeps from
	// starting, so the hold is let go after a while instead of never
	// (the events below are due either way).
	type watched struct {
		sub *application.Subscription
		err error
	}
	subscribed := make(chan watched, 1)
	go func() {
		var since int64
		sub, err := ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System(), Since: &since})
		subscribed <- watched{sub, err}
	}()
	var w watched
	select {
	case w = <-subscribed:
		close(release)
	case <-time.After(time.Second):
		t.Log("the subscription waited for a read of its own (the reader had let a wake-up pass); the hold is let go")
		close(release)
		w = <-subscribed
	}
	if w.err != nil {
		t.Fatal(w.err)
	}
	sub := w.sub
	defer sub.Close()
	if err := <-caughtUp; err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 3; want++ {
		ev, err := next(t, sub)
		if err != nil || ev.Change.Rev != want {
			t.Fatalf("event %+v, %v; want revision %d", ev.Change, err, want)
		}
	}
}

func createKey(t *testing.T, c *application.Cache, key string) {
	t.Helper()
	if _, err := c.Create(context.Background(), "mine", application.CacheInput{Key: key, Type: "t", AssigneeID: feedAlice, Data: []byte(`"v"`)}); err != nil {
		t.Error(err)
	}
}

// With no subscription the feed does not read the log after each write;
// a subscription gets the writes after it, and once it is gone the feed
// stops reading again.
func TestAnIdleFeedDoesNotReadTheLogPerWrite(t *testing.T) {
	t.Parallel()
	log, feed, cache, ops := idleFixture(t)
	if err := feed.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	idleWrites := func(from int) {
		t.Helper()
		changes, heads := log.changes.Load(), log.heads.Load()
		for i := range 200 {
			createKey(t, cache, "idle"+strconv.Itoa(from+i))
		}
		// Time for the reader to act on the pokes, as it did before
		// when it read after each group of writes.
		time.Sleep(100 * time.Millisecond)
		if c, h := log.changes.Load()-changes, log.heads.Load()-heads; c != 0 || h != 0 {
			t.Fatalf("200 writes with no subscription read the log's changes %d times and its head %d times, want none", c, h)
		}
	}
	idleWrites(0)
	sub, err := ops.Watch.Execute(t.Context(), application.WatchCachesInput{Assignment: "mine", Actor: domain.System()})
	if err != nil {
		t.Fatal(err)
	}
	createKey(t, cache, "live")
	ev, err := next(t, sub)
	if err != nil || ev.Change.Entry.Key != "live" {
		t.Fatalf("first event %q, %v; want the write after subscribing", ev.Change.Entry.Key, err)
	}
	if log.changes.Load() == 0 {
		t.Fatal("a subscribed feed delivered a change without reading the log")
	}
	sub.Close()
	// The first wake-up after the last subscription left may still read.
	createKey(t, cache, "leaving")
	time.Sleep(50 * time.Millisecond)
	idleWrites(200)
}

// Subscriptions that come and go while writes race them each get every
// change after their start exactly once and in order: without a
// revision, starting after a change committed before the call and no
// later than the head when it returned; resuming, right after the
// revision given.
func TestSubscriptionsRacingWritesAcrossIdleGetEveryChangeOnce(t *testing.T) {
	t.Parallel()
	log, _, cache, ops := idleFixture(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 100_000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			createKey(t, cache, "k"+strconv.Itoa(i))
			if i%8 == 0 {
				time.Sleep(20 * time.Microsecond)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	head := func() int64 {
		h, err := log.ChangeLog.Head(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for round := range 60 {
		in := application.WatchCachesInput{Assignment: "mine", Actor: domain.System()}
		before := head()
		resume := round%2 == 1 && before > 3
		if resume {
			since := before - 3
			in.Since = &since
		}
		sub, err := ops.Watch.Execute(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		after := head()
		var prev int64
		for i := range 20 {
			ev, err := next(t, sub)
			if err != nil || ev.Reset {
				t.Fatalf("round %d, event %d: %+v, %v", round, i, ev, err)
			}
			rev := ev.Change.Rev
			switch {
			case i == 0 && resume && rev != *in.Since+1:
				t.Fatalf("round %d: a resume after %d began with %d", round, *in.Since, rev)
			case i == 0 && !resume && (rev <= before || rev > after+1):
				t.Fatalf("round %d: began with %d; the head was %d before subscribing and %d after", round, rev, before, after)
			case i > 0 && rev != prev+1:
				t.Fatalf("round %d: %d followed %d (a change lost or doubled)", round, rev, prev)
			}
			prev = rev
		}
		sub.Close()
		// Let the feed go idle while the writes go on.
		time.Sleep(time.Duration(round%5) * time.Millisecond)
	}
}
