package application

import (
	"context"
	"errors"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// ChangeFeed is what WatchCaches and its subscriptions need of the one
// reader of the change log in a process, background.Feed (ARCHITECTURE.md,
// "Who owns what"). The feed hands each live change to the subscriptions
// it holds through Subscription.Offer and ends them with Subscription.End.
type ChangeFeed interface {
	// Log is the change log the feed reads, which a resume replays.
	Log() ports.ChangeLog
	// Metrics counts the events delivered and their lag.
	Metrics() ports.FeedMetrics
	// CatchUp returns once a read of the log that started after the call
	// has ended, or ErrFeedClosed once the feed has stopped.
	CatchUp(ctx context.Context) error
	// Subscribe registers s and returns the revision it starts after,
	// or ErrFeedClosed once the feed has stopped.
	Subscribe(ctx context.Context, s *Subscription) (int64, error)
	// Unsubscribe removes s; removing it again is harmless.
	Unsubscribe(s *Subscription)
}

// ErrFeedLagging ends a subscription whose subscriber did not keep up; it
// resumes from the last revision it received.
var ErrFeedLagging = errors.New("change feed: subscriber too slow, disconnected")

// ErrFeedClosed ends every subscription when the feed stops (shutdown).
var ErrFeedClosed = errors.New("change feed: closed")

// changeFilter selects the changes a subscription wants.
type changeFilter struct {
	assignee, key, typ string
	// never: the filters contradict the policy, so nothing matches.
	never bool
}

func (c changeFilter) matches(e *domain.Entry) bool {
	return !c.never && (c.assignee == "" || e.AssigneeID == c.assignee) &&
		(c.key == "" || e.Key == c.key) && (c.typ == "" || e.Type == c.typ)
}

// Scope returns the entity (table) whose changes s wants and the one
// assignee it is confined to ("" for any), so the feed indexes it.
func (s *Subscription) Scope() (entity, assignee string) { return s.entity, s.filter.assignee }

// Offer queues c for s when s wants it. It returns false when s already
// holds limit changes: the subscriber is too far behind, and the feed
// drops it (End with ErrFeedLagging).
func (s *Subscription) Offer(c *domain.Change, limit int) bool {
	if !s.filter.matches(&c.Entry) {
		return true
	}
	return s.queue.push(c, limit)
}

// End closes the subscription with err (the feed's ErrFeedLagging or
// ErrFeedClosed), once; Next then returns err.
func (s *Subscription) End(err error) { s.end(err) }
