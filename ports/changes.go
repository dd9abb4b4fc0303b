package ports

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// ChangeLog reads the log of cache changes. The repositories record a
// change in the same transaction as the change itself, on every write path,
// so the log misses nothing that committed and holds nothing that did not.
type ChangeLog interface {
	// For returns the log bound to caller, as CacheRepository.For: a
	// resuming subscriber's reads (ChangesOf, Head, Horizon) are its
	// caller's database work. The feed's own reads are nobody's.
	For(caller domain.Caller) ChangeLog
	// Changes returns, in revision order, at most limit changes with a
	// revision above after and at most the log's head (see Head): changes
	// no revision below which can still commit. An empty result means
	// nothing new yet.
	Changes(ctx context.Context, after int64, limit int) ([]domain.Change, error)
	// ChangesOf returns, in revision order, at most q.Limit changes of
	// q.Entity with a revision above q.After and at most q.Upto (at most
	// a Head the caller was given), of entries with each of q.AssigneeID,
	// q.Key and q.Type that is set. Its work must grow with the changes
	// that match (an index serves one assignee's changes in revision
	// order), not with the whole log. An empty result means none is left
	// up to q.Upto.
	ChangesOf(ctx context.Context, q ChangeQuery) ([]domain.Change, error)
	// Head returns the highest revision that is safe to deliver: every
	// change at or below it that will ever commit has committed and is
	// readable. It never goes down.
	Head(ctx context.Context) (int64, error)
	// Horizon returns the highest revision pruned: changes at or below it
	// are gone (0 when nothing was pruned).
	Horizon(ctx context.Context) (int64, error)
	// Prune removes at most limit of the oldest changes, oldest first and
	// only while they were recorded before t, and returns how many it
	// removed. Pruning only ever removes a prefix of the log.
	Prune(ctx context.Context, before time.Time, limit int) (int, error)
	// Wake returns a channel that receives when a change may have been
	// recorded, or nil when the log cannot tell (readers then poll).
	// Wake-ups may be lost; they only shorten a reader's wait.
	Wake() <-chan struct{}
}

// ChangeQuery selects changes of one entity (ChangeLog.ChangesOf); the
// empty AssigneeID, Key or Type selects any.
type ChangeQuery struct {
	Entity      string
	AssigneeID  string
	Key, Type   string
	After, Upto int64
	Limit       int
}

// FeedMetrics records the change feed's health. Implementations must be
// cheap and safe for concurrent use.
type FeedMetrics interface {
	// FeedSubscribers sets the number of open subscriptions.
	FeedSubscribers(n int)
	// FeedEventSent counts one event handed to a subscriber.
	FeedEventSent()
	// FeedSubscriberDropped counts one subscriber disconnected for not
	// keeping up.
	FeedSubscriberDropped()
	// FeedDeliveryLag records the time from a change's record to its
	// delivery.
	FeedDeliveryLag(d time.Duration)
}
