package background

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Feed defaults.
const (
	DefaultFeedRetention = time.Hour
	DefaultFeedPoll      = 250 * time.Millisecond
	DefaultFeedBuffer    = 256
	// feedBatch is how many changes one read of the log takes.
	feedBatch = 1000
	// feedPendingPoll is how soon the reader looks again while the log
	// holds revisions back for transactions in flight.
	feedPendingPoll = 5 * time.Millisecond
)

// FeedConfig configures a Feed.
type FeedConfig struct {
	Log   ports.ChangeLog
	Clock ports.Clock
	// Retention is how long changes are kept (DefaultFeedRetention when
	// zero).
	Retention time.Duration
	// Poll is the longest the reader waits before reading the log again
	// when nothing woke it (DefaultFeedPoll when zero): the delay of a
	// change made by another replica.
	Poll time.Duration
	// Buffer is how many changes a subscriber may fall behind before it is
	// disconnected (DefaultFeedBuffer when zero).
	Buffer  int
	Metrics ports.FeedMetrics
	Logger  *slog.Logger
}

// Feed is the one reader of the change log in a process
// (application.ChangeFeed): it reads each new change once and hands it to
// every subscription that wants it, so the database sees one query per
// batch however many subscribers listen. A subscriber that falls Buffer
// changes behind is dropped (application.ErrFeedLagging); the feed never
// waits for a subscriber.
type Feed struct {
	cfg FeedConfig
	// kick wakes the reader after a write of this process.
	kick chan struct{}

	mu     sync.Mutex
	pos    int64 // the last revision fanned out
	ready  chan struct{}
	closed bool
	// subs indexes the subscriptions by entity, then by the assignee
	// they are confined to ("" for any).
	subs  map[string]map[string]subSet
	count int
	// waiting is closed when the next read of the log has ended
	// (catchUp); nil while nobody waits.
	waiting chan struct{}
	// stale is set when the reader let a wake-up pass without reading
	// because nobody subscribed: pos may trail the log until a read.
	stale bool

	reads, prunes ports.FailureLog
}

type subSet map[*application.Subscription]struct{}

var _ application.ChangeFeed = (*Feed)(nil)

// NewFeed returns a feed; Run starts it.
func NewFeed(cfg FeedConfig) (*Feed, error) {
	if cfg.Log == nil || cfg.Clock == nil {
		return nil, errors.New("change feed needs a change log and a clock")
	}
	cfg.Retention = positive(cfg.Retention, DefaultFeedRetention)
	cfg.Poll = positive(cfg.Poll, DefaultFeedPoll)
	cfg.Buffer = positive(cfg.Buffer, DefaultFeedBuffer)
	cfg.Metrics = cmp.Or[ports.FeedMetrics](cfg.Metrics, nopFeedMetrics{})
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	return &Feed{cfg: cfg, kick: make(chan struct{}, 1), ready: make(chan struct{}),
		subs: map[string]map[string]subSet{}}, nil
}

// Log returns the change log the feed reads.
func (f *Feed) Log() ports.ChangeLog { return f.cfg.Log }

// Metrics returns the feed's metrics (a no-op when none were given).
func (f *Feed) Metrics() ports.FeedMetrics { return f.cfg.Metrics }

// Poke wakes the reader: a change was probably just recorded.
func (f *Feed) Poke() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Run reads the log until ctx ends, then closes every subscription with
// application.ErrFeedClosed. It also prunes changes older than the
// retention, in batches.
func (f *Feed) Run(ctx context.Context) error {
	defer f.Close()
	head, err := f.startPos(ctx)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.pos = head
	f.mu.Unlock()
	close(f.ready)

	wake := f.cfg.Log.Wake()
	pruneTick := time.NewTicker(min(max(f.cfg.Retention/10, time.Second), time.Minute))
	defer pruneTick.Stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	prune := true
	var lastRead time.Time
	for {
		// Those waiting for a read that starts after they asked
		// (CatchUp) are served by this one. With no subscription the
		// reader reads only the log's head, once per Poll and when asked.
		f.mu.Lock()
		waiting := f.waiting
		f.waiting = nil
		idle := f.count == 0
		read := !idle || waiting != nil || time.Since(lastRead) >= f.cfg.Poll
		f.stale = f.stale || !read
		f.mu.Unlock()
		var readErr error
		if read {
			lastRead = time.Now()
			readErr = f.read(ctx, idle)
			f.reads.Record(ctx, f.cfg.Logger, "change feed: read", readErr, f.cfg.Clock.Now())
		}
		if waiting != nil {
			close(waiting)
		}
		if prune {
			prune = false
			f.prunes.Record(ctx, f.cfg.Logger, "change feed: prune", f.prune(ctx), f.cfg.Clock.Now())
		}
		// The short poll is for revisions held back by transactions in
		// flight; a failed read waits the whole Poll.
		wait := f.cfg.Poll
		if read && readErr == nil && f.pending() {
			wait = feedPendingPoll
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-f.kick:
		case <-wake:
		case <-timer.C:
		case <-pruneTick.C:
			prune = true
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// startPos waits for the log to answer: a feed that cannot read its
// starting point retries rather than start from a wrong one.
func (f *Feed) startPos(ctx context.Context) (int64, error) {
	for {
		head, err := f.cfg.Log.Head(ctx)
		f.reads.Record(ctx, f.cfg.Logger, "change feed: read", err, f.cfg.Clock.Now())
		if err == nil {
			return head, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(f.cfg.Poll):
		}
	}
}

// pending reports whether the log holds revisions back for transactions
// in flight (PostgreSQL).
func (f *Feed) pending() bool {
	p, ok := f.cfg.Log.(interface{ Pending() bool })
	return ok && p.Pending()
}

// read brings pos to the log's head. Idle (no subscription when the
// loop looked), it reads only the head, unless a subscription came
// meanwhile.
func (f *Feed) read(ctx context.Context, idle bool) error {
	if idle {
		head, err := f.cfg.Log.Head(ctx)
		if err == nil && f.pending() {
			// Unread for a while, the PostgreSQL watermark's first read
			// settles only a revision drawn back then; the next settles
			// the one drawn now (ARCHITECTURE.md, "Ordering on PostgreSQL").
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(feedPendingPoll):
			}
			head, err = f.cfg.Log.Head(ctx)
		}
		if err != nil {
			return err
		}
		f.mu.Lock()
		idle = f.count == 0
		if idle {
			f.pos, f.stale = max(f.pos, head), false
		}
		f.mu.Unlock()
		if idle {
			return nil
		}
	}
	err := f.readAll(ctx)
	if err == nil {
		f.mu.Lock()
		f.stale = false
		f.mu.Unlock()
	}
	return err
}

// readAll fans out every change past pos.
func (f *Feed) readAll(ctx context.Context) error {
	for {
		f.mu.Lock()
		pos := f.pos
		f.mu.Unlock()
		batch, err := f.cfg.Log.Changes(ctx, pos, feedBatch)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		f.fanOut(batch)
		if len(batch) < feedBatch {
			return nil
		}
	}
}

// fanOut hands each change to the subscriptions that want it.
func (f *Feed) fanOut(batch []domain.Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range batch {
		c := &batch[i]
		if c.Rev <= f.pos {
			continue
		}
		f.pos = c.Rev
		es := f.subs[c.Entity]
		if a := c.Entry.AssigneeID; a != "" {
			for s := range es[a] {
				f.offerLocked(s, c)
			}
		}
		for s := range es[""] {
			f.offerLocked(s, c)
		}
	}
}

// offerLocked queues c for s, or drops s when its buffer is full.
func (f *Feed) offerLocked(s *application.Subscription, c *domain.Change) {
	if !s.Offer(c, f.cfg.Buffer) {
		f.removeLocked(s)
		s.End(application.ErrFeedLagging)
		f.cfg.Metrics.FeedSubscriberDropped()
	}
}

func (f *Feed) prune(ctx context.Context) error {
	before := f.cfg.Clock.Now().Add(-f.cfg.Retention)
	for {
		n, err := f.cfg.Log.Prune(ctx, before, feedBatch)
		if err != nil || n < feedBatch || ctx.Err() != nil {
			return err
		}
	}
}

// Close ends every subscription with application.ErrFeedClosed; later
// subscriptions fail with it.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	for _, es := range f.subs {
		for _, set := range es {
			for s := range set {
				s.End(application.ErrFeedClosed)
			}
		}
	}
	f.subs = map[string]map[string]subSet{}
	f.count = 0
	f.cfg.Metrics.FeedSubscribers(0)
	if f.waiting != nil {
		close(f.waiting)
		f.waiting = nil
	}
}

// CatchUp returns once a read of the log that started after the call has
// ended, so the feed's position has passed every change committed before
// it. Concurrent callers share that read.
func (f *Feed) CatchUp(ctx context.Context) error {
	select {
	case <-f.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return application.ErrFeedClosed
	}
	if f.waiting == nil {
		f.waiting = make(chan struct{})
	}
	read := f.waiting
	f.mu.Unlock()
	f.Poke()
	select {
	case <-read:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Subscribe registers s and returns the revision it starts after. The
// first subscription after the reader let writes pass unread waits for a
// read first (CatchUp), so it does not start at a position the log may
// have pruned.
func (f *Feed) Subscribe(ctx context.Context, s *application.Subscription) (int64, error) {
	select {
	case <-f.ready:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	f.mu.Lock()
	if f.count == 0 && f.stale {
		f.mu.Unlock()
		if err := f.CatchUp(ctx); err != nil {
			return 0, err
		}
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	if f.closed {
		return 0, application.ErrFeedClosed
	}
	entity, assignee := s.Scope()
	es := f.subs[entity]
	if es == nil {
		es = map[string]subSet{}
		f.subs[entity] = es
	}
	set := es[assignee]
	if set == nil {
		set = subSet{}
		es[assignee] = set
	}
	set[s] = struct{}{}
	f.count++
	f.cfg.Metrics.FeedSubscribers(f.count)
	if f.count == 1 {
		// The reader may have let writes after pos pass unread.
		f.Poke()
	}
	return f.pos, nil
}

// Unsubscribe removes s; removing it again is harmless.
func (f *Feed) Unsubscribe(s *application.Subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(s)
}

func (f *Feed) removeLocked(s *application.Subscription) {
	entity, assignee := s.Scope()
	set := f.subs[entity][assignee]
	if _, ok := set[s]; !ok {
		return
	}
	delete(set, s)
	if len(set) == 0 {
		delete(f.subs[entity], assignee)
	}
	f.count--
	f.cfg.Metrics.FeedSubscribers(f.count)
}

type nopFeedMetrics struct{}

func (nopFeedMetrics) FeedSubscribers(int)           {}
func (nopFeedMetrics) FeedEventSent()                {}
func (nopFeedMetrics) FeedSubscriberDropped()        {}
func (nopFeedMetrics) FeedDeliveryLag(time.Duration) {}
