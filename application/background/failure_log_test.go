package background_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// logRecords is a slog handler that keeps the messages logged and their
// attributes.
type logRecords struct {
	mu    sync.Mutex
	lines []logRecord
}

type logRecord struct {
	msg   string
	attrs map[string]slog.Value
}

func (r *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecords) WithGroup(string) slog.Handler            { return r }
func (r *logRecords) Handle(_ context.Context, rec slog.Record) error {
	l := logRecord{msg: rec.Message, attrs: map[string]slog.Value{}}
	rec.Attrs(func(a slog.Attr) bool { l.attrs[a.Key] = a.Value; return true })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, l)
	return nil
}

// with returns the lines logged with msg.
func (r *logRecords) with(msg string) []logRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []logRecord
	for _, l := range r.lines {
		if l.msg == msg {
			out = append(out, l)
		}
	}
	return out
}

// waitFor waits (up to a minute, to catch a hang, not to time anything)
// until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

var errDown = errors.New("dial tcp 127.0.0.1:5432: connection refused")

// downLog is a change log that fails its reads while down is set, and
// counts them.
type downLog struct {
	*memstore.ChangeLog
	down  atomic.Bool
	reads atomic.Int64
}

func (l *downLog) Changes(ctx context.Context, after int64, limit int) ([]domain.Change, error) {
	l.reads.Add(1)
	if l.down.Load() {
		return nil, errDown
	}
	return l.ChangeLog.Changes(ctx, after, limit)
}

func (l *downLog) Head(ctx context.Context) (int64, error) {
	l.reads.Add(1)
	if l.down.Load() {
		return 0, errDown
	}
	return l.ChangeLog.Head(ctx)
}

func (*downLog) Wake() <-chan struct{} { return nil }

// For keeps the failures: memory bounds no caller.
func (l *downLog) For(domain.Caller) ports.ChangeLog { return l }

func TestFeedLogsWhenItsReadsStartFailingAndWhenTheyRecover(t *testing.T) {
	t.Parallel()
	var logs logRecords
	log := &downLog{ChangeLog: memstore.NewChangeLog()}
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: newClock(), Poll: time.Millisecond,
		Logger: slog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	waitFor(t, "the feed's first read", func() bool { return log.reads.Load() >= 2 })
	log.down.Store(true)
	from := log.reads.Load()
	waitFor(t, "100 failed reads", func() bool { return log.reads.Load() >= from+100 })
	if got := logs.with("change feed: read failing"); len(got) != 1 || got[0].attrs["err"].String() != errDown.Error() {
		t.Fatalf("100 failed reads logged %d \"failing\" lines (%+v), want 1 with the error", len(got), got)
	}
	log.down.Store(false)
	waitFor(t, "the recovery line", func() bool { return len(logs.with("change feed: read recovered")) > 0 })
	upAt := log.reads.Load()
	waitFor(t, "more reads", func() bool { return log.reads.Load() >= upAt+10 })
	got := logs.with("change feed: read recovered")
	if len(got) != 1 || got[0].attrs["failed_attempts"].Int64() < 100 {
		t.Fatalf("the recovery logged %+v, want one line counting the 100 or more failed reads", got)
	}
	if n := len(logs.with("change feed: read failing")); n != 1 {
		t.Errorf("%d \"failing\" lines in all, want 1", n)
	}
}

// downFeed is a revocation feed that fails while down is set, and counts
// its polls.
type downFeed struct {
	down  atomic.Bool
	polls atomic.Int64
}

func (f *downFeed) RevokedFamilies(context.Context, time.Time) ([]string, error) {
	f.polls.Add(1)
	if f.down.Load() {
		return nil, errDown
	}
	return nil, nil
}

func TestRevokedSessionsLogWhenPollsStartFailingAndWhenTheyRecover(t *testing.T) {
	t.Parallel()
	var logs logRecords
	feed := &downFeed{}
	feed.down.Store(true)
	r, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: feed, Clock: newClock(),
		Poll: time.Millisecond, Log: slog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	waitFor(t, "100 failed polls", func() bool { return feed.polls.Load() >= 100 })
	if got := logs.with("read revoked sessions failing"); len(got) != 1 {
		t.Fatalf("100 failed polls logged %d \"failing\" lines, want 1", len(got))
	}
	feed.down.Store(false)
	waitFor(t, "the recovery line", func() bool { return len(logs.with("read revoked sessions recovered")) > 0 })
	upAt := feed.polls.Load()
	waitFor(t, "more polls", func() bool { return feed.polls.Load() >= upAt+10 })
	got := logs.with("read revoked sessions recovered")
	if len(got) != 1 || got[0].attrs["failed_attempts"].Int64() < 100 {
		t.Fatalf("the recovery logged %+v, want one line counting the 100 or more failed polls", got)
	}
	if n := len(logs.with("read revoked sessions failing")); n != 1 {
		t.Errorf("%d \"failing\" lines in all, want 1", n)
	}
}

// pendingDownLog is a downLog whose revisions stay held back (Pending),
// as the PostgreSQL log's were after a transaction in flight at a kill.
type pendingDownLog struct{ *downLog }

func (pendingDownLog) Pending() bool { return true }

// TestAFailingFeedPollsAtItsIntervalNotThePendingOne: while reads fail, the
// reader waits its whole Poll, not the 5 ms it waits for transactions in
// flight (a Patroni leader kill saw a replica read every 5 ms for the
// whole outage, docs/ha.md). Poll is 200 ms: the bound of 20 reads in
// 600 ms leaves ample room for a slow machine, and the fault made about
// 120.
func TestAFailingFeedPollsAtItsIntervalNotThePendingOne(t *testing.T) {
	t.Parallel()
	log := pendingDownLog{&downLog{ChangeLog: memstore.NewChangeLog()}}
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: newClock(), Poll: 200 * time.Millisecond,
		Logger: slog.New(&logRecords{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the feed's first read", func() bool { return log.reads.Load() >= 2 })
	log.down.Store(true)
	from := log.reads.Load()
	time.Sleep(600 * time.Millisecond)
	if n := log.reads.Load() - from; n > 20 {
		t.Fatalf("%d failed reads in 600 ms with a 200 ms poll; a failing feed must not poll at the pending interval", n)
	}
}
