package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// maxCacheUpdateTries bounds how often Update and Delete call fn again
// because another writer changed the entry meanwhile.
const maxCacheUpdateTries = 50

// CacheRepository is an in-memory ports.CacheRepository. It behaves as the
// database store does, dead rows included: deleted and expired entries stay
// until Purge removes them or a Create or Update needs their id or natural
// key. fn runs outside the lock (so it may call the repository), and
// Update and Delete store its result only if the entry did not change
// meanwhile, calling fn again otherwise. Deleting leaves an entry's
// version and DateUpdated as they were and sets DateDeleted.
type CacheRepository struct {
	mu   sync.Mutex
	rows map[string]domain.Entry // by id, live and dead
	// keys indexes the rows not deleted by natural key, as the database's
	// partial unique index does, so a create costs no scan.
	keys map[domain.NaturalKey]string
	// usage counts per assignee what the database's cache_usage counts
	// (domain.Quota); a repository without a log keeps no changes, so only
	// its rows and records count.
	usage map[string]domain.Usage
	// log, when set, records every change as entity (ChangeLog.Repository).
	log    *ChangeLog
	entity string
	// idem holds the idempotency records of the creates made with a key
	// (idempotency.go).
	idem map[idemKey]ports.IdempotencyRecord
}

var _ ports.CacheRepository = (*CacheRepository)(nil)

// NewCacheRepository returns an empty repository.
func NewCacheRepository() *CacheRepository {
	return &CacheRepository{rows: make(map[string]domain.Entry), keys: make(map[domain.NaturalKey]string),
		usage: make(map[string]domain.Usage), idem: make(map[idemKey]ports.IdempotencyRecord)}
}

// Create implements ports.CacheRepository. When a live entry has e's id and
// another e's natural key, ErrCacheIDTaken is returned; a conflict is
// reported before the quota.
func (r *CacheRepository) Create(_ context.Context, e domain.Entry, now time.Time, q domain.Quota) error {
	e = cacheCopy(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.createLocked(e, now, q, 0)
}

// createLocked is Create under the lock; the quota must also leave room
// for extra bytes (an idempotency record's).
func (r *CacheRepository) createLocked(e domain.Entry, now time.Time, q domain.Quota, extra int64) error {
	if old, ok := r.rows[e.ID]; ok {
		if old.Live(now) {
			return domain.ErrCacheIDTaken
		}
		r.dropLocked(e.ID, now)
	}
	if err := r.claimKeyLocked(e.NaturalKey(), e.ID, now); err != nil {
		return err
	}
	if err := r.admitLocked(q, nil, e, now, extra); err != nil {
		return err
	}
	r.rows[e.ID] = e
	r.keys[e.NaturalKey()] = e.ID
	r.countLocked(e, 1)
	r.recordLocked(domain.ChangeCreated, e, now)
	return nil
}

// admitLocked returns nil when writing next in place of prev (nil for a
// new entry), and extra bytes beside it, keeps next's assignee within q.
// When it would not, the assignee's dead rows are reclaimed first, as the
// database store does, so an expired or deleted entry never takes a place.
func (r *CacheRepository) admitLocked(q domain.Quota, prev *domain.Entry, next domain.Entry, now time.Time, extra int64) error {
	if q.Unlimited() {
		return nil
	}
	entries, bytes := domain.Growth(prev, next)
	if next.DateDeleted == nil {
		bytes += extra
	}
	if entries <= 0 && bytes <= 0 {
		return nil
	}
	if q.Admit(r.usage[next.AssigneeID], entries, bytes) == nil {
		return nil
	}
	for id, e := range r.rows {
		if e.AssigneeID == next.AssigneeID && !e.Live(now) {
			r.dropLocked(id, now)
		}
	}
	return q.Admit(r.usage[next.AssigneeID], entries, bytes)
}

// countLocked adds the row e to its assignee's usage (sign 1) or takes it
// away (sign -1).
func (r *CacheRepository) countLocked(e domain.Entry, sign int64) {
	r.addLocked(e.AssigneeID, sign, sign*int64(len(e.Data)))
}

// addLocked adds entries and bytes to assignee's usage.
func (r *CacheRepository) addLocked(assignee string, entries, bytes int64) {
	u := r.usage[assignee]
	u.Entries += entries
	u.Bytes += bytes
	if u == (domain.Usage{}) {
		delete(r.usage, assignee)
		return
	}
	r.usage[assignee] = u
}

// claimKeyLocked makes way for an entry with natural key k and id: a live
// holder of k is a conflict, an expired one is removed, as the database
// removes the rows its unique index reports.
func (r *CacheRepository) claimKeyLocked(k domain.NaturalKey, id string, now time.Time) error {
	oid, ok := r.keys[k]
	if !ok || oid == id {
		return nil
	}
	if r.rows[oid].Live(now) {
		return domain.ErrCacheEntityAlreadyExists
	}
	r.dropLocked(oid, now)
	return nil
}

// dropLocked removes the row with id and its natural-key index entry. A
// row not deleted before is an expired entry reclaimed: recorded as such.
func (r *CacheRepository) dropLocked(id string, now time.Time) {
	e := r.rows[id]
	r.unindexLocked(e)
	r.countLocked(e, -1)
	delete(r.rows, id)
	if e.DateDeleted == nil {
		gone := e
		if e.ExpiresAt != nil {
			gone.DateDeleted = e.ExpiresAt
			r.recordLocked(domain.ChangeExpired, gone, now)
		} else {
			gone.DateDeleted = &now
			r.recordLocked(domain.ChangeDeleted, gone, now)
		}
	}
}

// recordLocked records a change of e when the repository has a log, and
// counts what the change keeps until the log prunes it (unprune).
func (r *CacheRepository) recordLocked(kind domain.ChangeKind, e domain.Entry, now time.Time) {
	if r.log != nil {
		r.addLocked(e.AssigneeID, 0, domain.ChangeBytes(e))
		r.log.record(r.entity, kind, e, now)
	}
}

// unprune takes a change the log pruned off its assignee's usage.
func (r *CacheRepository) unprune(c domain.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(c.Entry.AssigneeID, 0, -domain.ChangeBytes(c.Entry))
}

// unindexLocked forgets e's natural key if it points at e.
func (r *CacheRepository) unindexLocked(e domain.Entry) {
	if r.keys[e.NaturalKey()] == e.ID {
		delete(r.keys, e.NaturalKey())
	}
}

// Get implements ports.CacheRepository.
func (r *CacheRepository) Get(_ context.Context, id string, now time.Time) (domain.Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.rows[id]
	if !ok || !e.Live(now) {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	return cacheCopy(e), nil
}

// GetByKey implements ports.CacheRepository.
func (r *CacheRepository) GetByKey(_ context.Context, k domain.NaturalKey, now time.Time) (domain.Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.rows {
		if e.NaturalKey() == k && e.Live(now) {
			return cacheCopy(e), nil
		}
	}
	return domain.Entry{}, domain.ErrCacheNotFound
}

// List implements ports.CacheRepository, with the same conventions as the
// database store (see query.go). Matching entries are chosen and sorted
// under the lock; each is copied only when it is yielded, outside it.
func (r *CacheRepository) List(_ context.Context, q ports.ListQuery, now time.Time, yield func(domain.Entry) error) (ports.ListResult, error) {
	keys := q.Sort
	if len(keys) == 0 {
		keys = defaultSort
	}
	r.mu.Lock()
	var match []domain.Entry
	for _, e := range r.rows {
		if e.Live(now) && (q.Owner == "" || e.AssigneeID == q.Owner) && q.Filter.Match(entryValues(&e)) {
			match = append(match, e)
		}
	}
	r.mu.Unlock()
	// Equal keys order by id ascending; a missing expirationDate sorts
	// after every date (domain.CompareBy).
	slices.SortFunc(match, func(a, b domain.Entry) int {
		return cmp.Or(domain.CompareBy(keys, entryValues(&a), entryValues(&b)), strings.Compare(a.ID, b.ID))
	})
	var res ports.ListResult
	if q.CountTotal {
		res.Total = len(match)
	}
	if q.Limit <= 0 {
		return res, nil
	}
	from := min(max(q.Offset, 0), len(match))
	to := min(from+q.Limit, len(match))
	for _, e := range match[from:to] {
		if err := yield(cacheCopy(e)); err != nil {
			return ports.ListResult{}, err
		}
	}
	return res, nil
}

// Update implements ports.CacheRepository. Only Version is set by the
// repository; every other field, DateUpdated included, is what fn left
// (the id excepted, which fn cannot change).
func (r *CacheRepository) Update(ctx context.Context, id string, now time.Time, q domain.Quota, fn func(*domain.Entry) error) (domain.Entry, error) {
	for range maxCacheUpdateTries {
		cur, err := r.Get(ctx, id, now)
		if err != nil {
			return domain.Entry{}, err
		}
		next := cacheCopy(cur)
		if err := fn(&next); err != nil {
			return domain.Entry{}, err
		}
		next = cacheCopy(next)
		next.ID, next.Version = cur.ID, cur.Version+1
		stored, err := r.swap(cur, next, now, q)
		if err != nil {
			return domain.Entry{}, err
		}
		if stored {
			return cacheCopy(next), nil
		}
	}
	return domain.Entry{}, fmt.Errorf("memstore: update entry: changed by others %d times in a row", maxCacheUpdateTries)
}

// swap stores next in place of cur if the entry still is cur and next
// keeps its assignee within q.
func (r *CacheRepository) swap(cur, next domain.Entry, now time.Time, q domain.Quota) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.unchangedLocked(cur) {
		return false, nil
	}
	if next.DateDeleted == nil && next.NaturalKey() != cur.NaturalKey() {
		if err := r.claimKeyLocked(next.NaturalKey(), next.ID, now); err != nil {
			return false, err
		}
	}
	if err := r.admitLocked(q, &cur, next, now, 0); err != nil {
		return false, err
	}
	r.unindexLocked(cur)
	r.countLocked(cur, -1)
	r.countLocked(next, 1)
	r.rows[next.ID] = next
	kind := domain.ChangeUpdated
	if next.DateDeleted == nil {
		r.keys[next.NaturalKey()] = next.ID
	} else {
		kind = domain.ChangeDeleted
	}
	r.recordLocked(kind, next, now)
	return true, nil
}

// unchangedLocked reports whether the row with cur's id is still cur.
func (r *CacheRepository) unchangedLocked(cur domain.Entry) bool {
	e, ok := r.rows[cur.ID]
	return ok && e.DateDeleted == nil && e.Version == cur.Version && e.DateCreated.Equal(cur.DateCreated)
}

// Delete implements ports.CacheRepository.
func (r *CacheRepository) Delete(ctx context.Context, id string, now time.Time, fn func(domain.Entry) error) (domain.Entry, error) {
	at := domain.Normalize(now)
	for range maxCacheUpdateTries {
		cur, err := r.Get(ctx, id, now)
		if err != nil {
			return domain.Entry{}, err
		}
		if err := fn(cacheCopy(cur)); err != nil {
			return domain.Entry{}, err
		}
		r.mu.Lock()
		ok := r.unchangedLocked(cur)
		if ok {
			r.unindexLocked(cur)
			cur.DateDeleted = &at
			r.rows[id] = cur
			r.recordLocked(domain.ChangeDeleted, cur, at)
		}
		r.mu.Unlock()
		if ok {
			return cacheCopy(cur), nil
		}
	}
	return domain.Entry{}, fmt.Errorf("memstore: delete entry: changed by others %d times in a row", maxCacheUpdateTries)
}

// DeleteByAssignee implements ports.CacheRepository.
func (r *CacheRepository) DeleteByAssignee(_ context.Context, assigneeID string, now time.Time) (int, error) {
	at := domain.Normalize(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id, e := range r.rows {
		if e.AssigneeID == assigneeID && e.Live(now) {
			r.unindexLocked(e)
			e.DateDeleted = &at
			r.rows[id] = e
			r.recordLocked(domain.ChangeDeleted, e, at)
			n++
		}
	}
	return n, nil
}

// Purge implements ports.CacheRepository.
func (r *CacheRepository) Purge(_ context.Context, now time.Time, limit int) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id, e := range r.rows {
		if n >= limit {
			break
		}
		if !e.Live(now) {
			r.dropLocked(id, now)
			n++
		}
	}
	return n, nil
}

// cacheCopy returns e with its own Data and times normalized as the
// database stores them, so neither side can change the other's copy.
func cacheCopy(e domain.Entry) domain.Entry {
	e = e.Normalized()
	e.Data = bytes.Clone(e.Data)
	return e
}

// For implements ports.CacheRepository: memory bounds no caller.
func (r *CacheRepository) For(domain.Caller) ports.CacheRepository { return r }
