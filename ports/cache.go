package ports

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// ListQuery selects live entries: those of Owner (when set) that match
// Filter. Owner is the access policy's confinement and is ANDed outside
// Filter, so nothing in Filter can widen it. Results are ordered by Sort,
// then by id ascending (so pages are stable); without Sort by dateCreated.
type ListQuery struct {
	Owner  string
	Filter domain.Filter
	Sort   []domain.SortKey
	// Limit is the most entries returned; the caller always sets it.
	Limit  int
	Offset int
	// CountTotal asks for the number of matching entries regardless of
	// Limit and Offset.
	CountTotal bool
}

// ListResult is what a list reports besides its entries.
type ListResult struct {
	// Total is set only when the query asked for it.
	Total int
}

// CacheRepository stores the entries of one cache entity (one table).
// Reads take the current instant and never return an entry that is deleted
// or expired at it.
type CacheRepository interface {
	// For returns the repository bound to caller: its calls are caller's
	// database work, which a store sharing its database between callers
	// bounds and charges (README, "Fair share of the database"); the zero
	// Caller is not bounded. It is cheap, and a store that bounds no
	// caller returns itself; a wrapper wraps the bound repository too.
	For(caller domain.Caller) CacheRepository
	// Create stores e as given (the caller set every field). It returns
	// domain.ErrCacheEntityAlreadyExists when a live entry has e's natural
	// key and domain.ErrCacheIDTaken when a live entry has e's id. Dead rows
	// (deleted or expired at now) never cause a conflict.
	//
	// It returns domain.ErrCacheQuotaExceeded when e would take its
	// assignee past q (see domain.Quota; the zero Quota limits nothing),
	// counting the entries of that assignee in this store live at now.
	// The check and the write are atomic: of concurrent writes competing
	// for the last place, one succeeds, across processes too.
	Create(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota) error
	// Get returns the live entry with id, or domain.ErrCacheNotFound.
	Get(ctx context.Context, id string, now time.Time) (domain.Entry, error)
	// GetByKey returns the live entry with natural key k, or
	// domain.ErrCacheNotFound.
	GetByKey(ctx context.Context, k domain.NaturalKey, now time.Time) (domain.Entry, error)
	// List calls yield with each live entry matching q, in order, one at
	// a time, without holding the whole page in memory; the entry is the
	// callee's to keep. The total, when asked for, is counted before the
	// first entry is yielded. An error from yield stops the list and is
	// returned as is; other errors are the store's: a store that bounds
	// the database's time on a query returns domain.ErrQueryTooExpensive
	// past it. A Limit of zero or less yields nothing.
	List(ctx context.Context, q ListQuery, now time.Time, yield func(domain.Entry) error) (ListResult, error)
	// Update loads the live entry with id, lets fn change it and stores the
	// result with Version one higher, atomically: when another writer got
	// there first, Update reloads and calls fn again. fn may be called more
	// than once and must not keep the pointer. An error from fn is returned
	// as is. Update returns domain.ErrCacheNotFound when no live entry has
	// id and domain.ErrCacheEntityAlreadyExists when the changed natural
	// key collides with another live entry. It returns
	// domain.ErrCacheQuotaExceeded when the result would take its assignee
	// past q, as Create does; a result that does not grow its assignee's
	// usage (domain.Growth) is never refused.
	Update(ctx context.Context, id string, now time.Time, q domain.Quota, fn func(*domain.Entry) error) (domain.Entry, error)
	// Delete marks the live entry with id deleted at now, after fn (which
	// may refuse with an error, returned as is) approved the current state;
	// it returns the deleted entry, or domain.ErrCacheNotFound. Like Update
	// it retries fn when another writer got there first.
	Delete(ctx context.Context, id string, now time.Time, fn func(domain.Entry) error) (domain.Entry, error)
	// DeleteByAssignee marks every live entry of assigneeID deleted at now
	// and returns how many it marked.
	DeleteByAssignee(ctx context.Context, assigneeID string, now time.Time) (int, error)
	// Purge removes from storage at most limit rows that are deleted or
	// expired at now and returns how many it removed. Several callers may
	// purge at once (replicas) without removing a row twice or blocking
	// each other for long.
	Purge(ctx context.Context, now time.Time, limit int) (int, error)

	// CreateIdempotent is Create with rec stored in the same transaction,
	// rec first: the entry is written only if rec is, and rec only if the
	// entry is. It returns domain.ErrIdempotencyKeyInProgress, writing
	// nothing, when a record with rec's Scope and Key exists that has not
	// expired at now (one that has is replaced). Of concurrent calls with
	// one scope and key, at most one writes; the others wait for it to end
	// where the store can (a database's unique index), so that after this
	// error IdempotencyRecord finds the winner's record unless the winner
	// failed.
	CreateIdempotent(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota, rec IdempotencyRecord) error
	// IdempotencyRecord returns the record with scope and key that has not
	// expired at now; ok is false when there is none.
	IdempotencyRecord(ctx context.Context, scope, key string, now time.Time) (rec IdempotencyRecord, ok bool, err error)
	// PurgeIdempotency removes at most limit records expired at now and
	// returns how many it removed; like Purge, several callers may run it
	// at once.
	PurgeIdempotency(ctx context.Context, now time.Time, limit int) (int, error)
}
