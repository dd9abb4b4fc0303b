package application

import (
	"context"
	"iter"

	"github.com/cachegate/cachegate/domain"
)

// CacheOperations bundles one use case per cache operation, built on one
// CacheConfig: the HTTP adapter drives them, and NewCache takes the Go
// API's use cases from it.
type CacheOperations struct {
	Assignments *Assignments
	Create      *CreateCache
	Get         *GetCache
	List        *ListCaches
	Replace     *ReplaceCache
	Patch       *PatchCache
	Update      *UpdateCacheByKey
	Delete      *DeleteCache
	Clear       *ClearCaches
	Watch       *WatchCaches
}

// NewCacheOperations builds every cache use case on the same dependencies.
func NewCacheOperations(d CacheConfig) (*CacheOperations, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	create := &CreateCache{deps: d}
	return &CacheOperations{
		Assignments: d.Assignments,
		Create:      create,
		Get:         &GetCache{deps: d},
		List:        &ListCaches{deps: d},
		Replace:     &ReplaceCache{deps: d, create: create},
		Patch:       &PatchCache{deps: d},
		Update:      &UpdateCacheByKey{deps: d},
		Delete:      &DeleteCache{deps: d},
		Clear:       &ClearCaches{deps: d},
		Watch:       &WatchCaches{deps: d, feed: d.Feed},
	}, nil
}

// QueryOption refines one cache operation of the Go API (docs/api.md,
// "The Go API").
type QueryOption func(*queryOptions)

type queryOptions struct {
	actor domain.Actor
	pre   Preconditions
	idem  *IdempotencyKey
}

// AsActor runs the operation on behalf of actor, so the assignment's
// access policy applies; without it the trusted system actor runs it.
func AsActor(a domain.Actor) QueryOption { return func(o *queryOptions) { o.actor = a } }

// IfVersion makes update and delete apply only to that version, failing
// with domain.ErrVersionMismatch otherwise.
func IfVersion(v int) QueryOption { return func(o *queryOptions) { o.pre.IfMatch = &v } }

// WithIdempotencyKey makes Create idempotent under key: a retry with the
// same key and input within IdempotencyLifetime returns the entry the
// first call created, without writing again (README, "Idempotent
// retries"). Other operations ignore it.
func WithIdempotencyKey(key string) QueryOption {
	return func(o *queryOptions) { o.idem = &IdempotencyKey{Key: key} }
}

// collect applies opts. A call AsActor of a user is that user's database
// work, bounded as its HTTP requests are.
func collect(opts []QueryOption) queryOptions {
	o := queryOptions{actor: domain.System()}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Cache is the programmatic cache interface of docs/api.md, "The Go API".
// Every method takes the assignment (an assignment name or an entity key),
// the cache argument and optional query options. Calls run as the trusted
// system actor unless AsActor says otherwise.
type Cache struct{ uc CacheOperations }

// NewCache returns the Go API over the use cases of uc.
func NewCache(uc *CacheOperations) *Cache { return &Cache{uc: *uc} }

// Create creates an entry; see CreateCache.Execute for its errors.
func (c *Cache) Create(ctx context.Context, assignment string, in CacheInput, opts ...QueryOption) (domain.Entry, error) {
	o := collect(opts)
	return c.uc.Create.Execute(ctx, CreateCacheInput{Assignment: assignment, Actor: o.actor, Cache: in, Idempotency: o.idem})
}

// Update replaces the data, and the expiry when in.ExpiresIn is set, of
// the entry with in's key, type and assignee.
func (c *Cache) Update(ctx context.Context, assignment string, in CacheInput, opts ...QueryOption) (domain.Entry, error) {
	o := collect(opts)
	return c.uc.Update.Execute(ctx, UpdateCacheByKeyInput{Assignment: assignment, Actor: o.actor, Cache: in, Pre: o.pre})
}

// Delete deletes the entry with ref's key, type and assignee.
func (c *Cache) Delete(ctx context.Context, assignment string, ref CacheRef, opts ...QueryOption) error {
	o := collect(opts)
	_, err := c.uc.Delete.Execute(ctx, DeleteCacheInput{Assignment: assignment, Actor: o.actor, Ref: ref, Pre: o.pre})
	return err
}

// Get returns the live entry with ref's key, type and assignee, or
// domain.ErrCacheNotFound.
func (c *Cache) Get(ctx context.Context, assignment string, ref CacheRef, opts ...QueryOption) (domain.Entry, error) {
	return c.uc.Get.Execute(ctx, GetCacheInput{Assignment: assignment, Actor: collect(opts).actor, Ref: ref})
}

// GetAssignedCaches returns every live entry of the assignee, oldest
// first.
func (c *Cache) GetAssignedCaches(ctx context.Context, assignment, assigneeID string, opts ...QueryOption) ([]domain.Entry, error) {
	if _, err := domain.ParseAssigneeID(assigneeID); err != nil {
		return nil, err
	}
	return c.all(ctx, ListCachesInput{Assignment: assignment, Actor: collect(opts).actor, AssigneeID: assigneeID})
}

// Find returns every live entry of the assignment that matches f (the
// query language of docs/api.md ("Listing"), built with domain.NewCondition,
// domain.AllOf and domain.AnyOf), ordered by sort and then by id. The
// actor's access policy applies on top of f.
func (c *Cache) Find(ctx context.Context, assignment string, f domain.Filter, sort []domain.SortKey, opts ...QueryOption) ([]domain.Entry, error) {
	return c.all(ctx, ListCachesInput{Assignment: assignment, Actor: collect(opts).actor, Filter: f, Sort: sort})
}

// all returns every entry in selects, listed a page of the largest size
// at a time.
func (c *Cache) all(ctx context.Context, in ListCachesInput) ([]domain.Entry, error) {
	all := []domain.Entry{}
	_, in.Limit = c.uc.List.Limits()
	for ; ; in.Offset += in.Limit {
		n := 0
		_, err := c.uc.List.Stream(ctx, in, func(e domain.Entry) error {
			all = append(all, e)
			n++
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n < in.Limit {
			return all, nil
		}
	}
}

// Clear deletes every entry of the assignee and returns how many.
func (c *Cache) Clear(ctx context.Context, assignment, assigneeID string, opts ...QueryOption) (int, error) {
	return c.uc.Clear.Execute(ctx, ClearCachesInput{Assignment: assignment, Actor: collect(opts).actor, AssigneeID: assigneeID})
}

// WatchFilter selects the changes Watch reports; see WatchCachesInput.
type WatchFilter struct {
	// Since resumes after that revision; nil starts with the next change.
	Since                 *int64
	Key, Type, AssigneeID string
}

// Watch reports the changes of an assignment's entries as the HTTP feed
// does (docs/api.md, "Change feed"). The iterator ends when ctx does, or
// with one error: ErrFeedLagging when the loop body falls too far behind
// (resume from the last revision seen), ErrFeedClosed on shutdown, or the
// error that kept it from starting.
func (c *Cache) Watch(ctx context.Context, assignment string, w WatchFilter, opts ...QueryOption) iter.Seq2[FeedEvent, error] {
	o := collect(opts)
	return func(yield func(FeedEvent, error) bool) {
		s, err := c.uc.Watch.Execute(ctx, WatchCachesInput{Assignment: assignment, Actor: o.actor, Since: w.Since,
			Key: w.Key, Type: w.Type, AssigneeID: w.AssigneeID})
		if err != nil {
			yield(FeedEvent{}, err)
			return
		}
		s.events(ctx)(yield)
	}
}
