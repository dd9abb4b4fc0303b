package application

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// replayPage is how many changes a resuming subscription reads from the
// log at a time.
const replayPage = 500

// FeedEvent is one item of a change feed: a change, or a reset.
type FeedEvent struct {
	// Change is the change; unset when Reset.
	Change domain.Change
	// Reset says that changes after the requested revision were pruned:
	// the subscriber must re-list; the changes that follow come next.
	// Oldest is the oldest revision still retained.
	Reset  bool
	Oldest int64
}

// WatchCachesInput is a subscription to the changes of one assignment.
type WatchCachesInput struct {
	Assignment string
	Actor      domain.Actor
	// Since resumes after that revision: every retained change after it is
	// replayed in order, then the live ones follow, with no gap and no
	// duplicate. Nil starts with the next change.
	Since *int64
	// Key, Type and AssigneeID, when set, keep only the changes of entries
	// with that key, type or assignee.
	Key, Type, AssigneeID string
}

// WatchCaches subscribes to the change feed of an assignment, under its
// access policy: an owner-policy actor sees only its own entries' changes.
type WatchCaches struct {
	deps CacheConfig
	feed ChangeFeed
}

// Available reports whether the cache has a change feed to watch.
func (uc *WatchCaches) Available() bool { return uc.feed != nil }

// ErrFeedUnavailable is returned by Watch when the cache was built without
// a change feed.
var ErrFeedUnavailable = errors.New("change feed: not configured")

// Execute opens a subscription; the caller reads it with Next and closes
// it. It returns domain.ErrUnknownAssignment, domain.ErrUnauthenticated
// when the policy needs a user, a validation error for a negative Since,
// and ErrFeedClosed once the feed has stopped.
func (uc *WatchCaches) Execute(ctx context.Context, in WatchCachesInput) (*Subscription, error) {
	st, _, _, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return nil, err
	}
	if uc.feed == nil || st.Table == "" {
		return nil, ErrFeedUnavailable
	}
	if in.Since != nil && *in.Since < 0 {
		return nil, domain.InvalidField("since", "must be a revision: a non-negative integer")
	}
	f := changeFilter{key: in.Key, typ: in.Type, assignee: strings.ToLower(in.AssigneeID)}
	if owner := ownerFilter(in.Actor, st); owner != "" {
		if f.assignee != "" && f.assignee != owner {
			f.never = true
		}
		f.assignee = owner
	}
	if in.Since == nil {
		// The stream starts with the next change, not with one already
		// committed that this process's reader has not read yet.
		if err := uc.feed.CatchUp(ctx); err != nil {
			return nil, err
		}
	}
	// The resume's reads of the log are the actor's database work
	// (ports.CacheRepository.For), bound once for the subscription's life.
	log := uc.feed.Log().For(in.Actor.Caller())
	s := &Subscription{feed: uc.feed, log: log, clock: uc.deps.Clock, entity: st.Table, filter: f, queue: newChangeQueue(), done: make(chan struct{})}
	pos, err := uc.feed.Subscribe(ctx, s)
	if err != nil {
		return nil, err
	}
	s.cursor = pos
	if in.Since == nil {
		return s, nil
	}
	since := *in.Since
	horizon, err := log.Horizon(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	switch {
	case since < horizon:
		// The client re-lists after the reset, which holds what the log
		// holds now: go on after the log's head, not after the feed's
		// position, which may trail it.
		head, err := log.Head(ctx)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.cursor = max(pos, head)
		s.reset = &FeedEvent{Reset: true, Oldest: horizon + 1}
	case since < pos:
		s.cursor, s.replayTo = since, pos
	default:
		// A revision this replica has not read yet (another replica is
		// ahead): skip what the client already has.
		s.cursor = since
	}
	return s, nil
}

// Subscription is one subscriber's view of the feed. Next is not safe for
// concurrent use; Close is.
type Subscription struct {
	feed   ChangeFeed
	log    ports.ChangeLog // bound to the subscriber's caller, for the replay
	clock  ports.Clock
	entity string
	filter changeFilter
	queue  changeQueue
	done   chan struct{}
	once   sync.Once
	err    error // why done closed; written before

	cursor     int64 // the last revision handed out or skipped
	replayTo   int64 // the log is replayed up to here before the live changes
	page       []domain.Change
	replayLast bool // the replay's last page was read
	reset      *FeedEvent
}

// end closes the subscription with err, once.
func (s *Subscription) end(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.done)
	})
}

// Done is closed when the feed ends the subscription (ErrFeedLagging,
// ErrFeedClosed) or Close was called; Next then returns the reason.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Close ends the subscription.
func (s *Subscription) Close() {
	s.feed.Unsubscribe(s)
	s.end(ErrFeedClosed)
}

// Ready receives when live changes were queued since it last did. A
// caller that waits for events itself (rather than in Next) selects on it
// and on Done, then calls TryNext until it reports none.
func (s *Subscription) Ready() <-chan struct{} { return s.queue.ready }

// Next returns the next event, waiting for it until ctx ends (then it
// returns ctx's error and the subscription stays usable). It returns
// ErrFeedLagging or ErrFeedClosed when the subscription has ended.
func (s *Subscription) Next(ctx context.Context) (FeedEvent, error) {
	for {
		ev, ok, err := s.TryNext(ctx)
		if ok || err != nil {
			return ev, err
		}
		select {
		case <-s.queue.ready:
		case <-s.done:
		case <-ctx.Done():
			return FeedEvent{}, ctx.Err()
		}
	}
}

// TryNext is Next without the wait for a live change: ok is false when
// none is queued yet. It may still read the log (a replay) with ctx.
func (s *Subscription) TryNext(ctx context.Context) (ev FeedEvent, ok bool, err error) {
	if r := s.reset; r != nil {
		s.reset = nil
		return *r, true, nil
	}
	for s.cursor < s.replayTo {
		if len(s.page) == 0 {
			if s.replayLast {
				s.cursor = s.replayTo
				break
			}
			if err := s.loadPage(ctx); err != nil {
				return FeedEvent{}, false, err
			}
			if s.reset != nil {
				return s.TryNext(ctx)
			}
			continue
		}
		c := s.page[0]
		s.page = s.page[1:]
		s.cursor = c.Rev
		if c.Entity == s.entity && s.filter.matches(&c.Entry) {
			return s.deliver(&c), true, nil
		}
	}
	for {
		// An ended subscription hands out nothing more, even what was
		// queued: a dropped subscriber resumes from its last revision.
		select {
		case <-s.done:
			return FeedEvent{}, false, s.err
		default:
		}
		c := s.queue.pop()
		if c == nil {
			return FeedEvent{}, false, nil
		}
		if c.Rev > s.cursor {
			s.cursor = c.Rev
			return s.deliver(c), true, nil
		}
	}
}

// loadPage reads the next page of the replay, only the changes of the
// subscription's entity and filter (ports.ChangeLog.ChangesOf). When the
// log was pruned past the cursor meanwhile, the replay ends with a reset.
func (s *Subscription) loadPage(ctx context.Context) error {
	log := s.log
	page, err := log.ChangesOf(ctx, ports.ChangeQuery{Entity: s.entity, AssigneeID: s.filter.assignee,
		Key: s.filter.key, Type: s.filter.typ, After: s.cursor, Upto: s.replayTo, Limit: replayPage})
	if err != nil {
		return err
	}
	horizon, err := log.Horizon(ctx)
	if err != nil {
		return err
	}
	if horizon > s.cursor {
		s.reset = &FeedEvent{Reset: true, Oldest: horizon + 1}
		s.cursor, s.page = s.replayTo, nil
		return nil
	}
	for i, c := range page {
		if c.Rev > s.replayTo {
			page = page[:i]
			break
		}
	}
	if len(page) < replayPage {
		// The last page: the replay ends once it is handed out, without
		// one more query to find it empty.
		s.replayLast = true
	}
	if len(page) == 0 {
		s.cursor = s.replayTo
	}
	s.page = page
	return nil
}

func (s *Subscription) deliver(c *domain.Change) FeedEvent {
	m := s.feed.Metrics()
	m.FeedEventSent()
	m.FeedDeliveryLag(s.clock.Now().Sub(c.At))
	return FeedEvent{Change: *c}
}

// events adapts a subscription to an iterator that ends when ctx does.
func (s *Subscription) events(ctx context.Context) iter.Seq2[FeedEvent, error] {
	return func(yield func(FeedEvent, error) bool) {
		defer s.Close()
		for {
			ev, err := s.Next(ctx)
			if ctx.Err() != nil {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}
