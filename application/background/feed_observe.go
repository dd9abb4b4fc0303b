package background

import (
	"context"
	"reflect"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Observe returns repo with every write followed by a Poke, so the feed
// reads a change of this process at once instead of at its next poll.
// Changes of other processes (replicas) arrive by the poll.
func (f *Feed) Observe(repo ports.CacheRepository) ports.CacheRepository {
	// A repository whose For returns itself (memstore's) is observed by
	// the same observedRepo for every caller; an uncomparable one cannot
	// tell.
	self := reflect.TypeOf(repo).Comparable() && repo.For(domain.Caller{User: "-"}) == repo
	return &observedRepo{CacheRepository: repo, feed: f, self: self}
}

type observedRepo struct {
	ports.CacheRepository
	feed *Feed
	self bool
}

// For observes the repository bound to caller.
func (r *observedRepo) For(caller domain.Caller) ports.CacheRepository {
	if r.self {
		return r
	}
	return &observedRepo{CacheRepository: r.CacheRepository.For(caller), feed: r.feed}
}

func (r *observedRepo) Create(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota) error {
	defer r.feed.Poke()
	return r.CacheRepository.Create(ctx, e, now, q)
}

func (r *observedRepo) CreateIdempotent(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota, rec ports.IdempotencyRecord) error {
	defer r.feed.Poke()
	return r.CacheRepository.CreateIdempotent(ctx, e, now, q, rec)
}

func (r *observedRepo) Update(ctx context.Context, id string, now time.Time, q domain.Quota, fn func(*domain.Entry) error) (domain.Entry, error) {
	defer r.feed.Poke()
	return r.CacheRepository.Update(ctx, id, now, q, fn)
}

func (r *observedRepo) Delete(ctx context.Context, id string, now time.Time, fn func(domain.Entry) error) (domain.Entry, error) {
	defer r.feed.Poke()
	return r.CacheRepository.Delete(ctx, id, now, fn)
}

func (r *observedRepo) DeleteByAssignee(ctx context.Context, assigneeID string, now time.Time) (int, error) {
	defer r.feed.Poke()
	return r.CacheRepository.DeleteByAssignee(ctx, assigneeID, now)
}

func (r *observedRepo) Purge(ctx context.Context, now time.Time, limit int) (int, error) {
	n, err := r.CacheRepository.Purge(ctx, now, limit)
	if n > 0 {
		r.feed.Poke()
	}
	return n, err
}
