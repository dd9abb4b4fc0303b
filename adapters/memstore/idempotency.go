package memstore

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// idemKey is an idempotency record's identity: its scope and key.
type idemKey struct{ scope, key string }

// CreateIdempotent implements ports.CacheRepository: the record and the
// entry are written under the one lock, both or neither.
func (r *CacheRepository) CreateIdempotent(_ context.Context, e domain.Entry, now time.Time, q domain.Quota, rec ports.IdempotencyRecord) error {
	e = cacheCopy(e)
	rec.Entry = cacheCopy(rec.Entry)
	k := idemKey{rec.Scope, rec.Key}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.idem[k]; ok && old.ExpiresAt.After(now) {
		return domain.ErrIdempotencyKeyInProgress
	}
	if old, ok := r.idem[k]; ok {
		r.dropRecordLocked(k, old)
	}
	cost := domain.RecordBytes(rec.Scope, rec.Key, rec.Entry)
	if err := r.createLocked(e, now, q, cost); err != nil {
		return err
	}
	r.idem[k] = rec
	r.addLocked(rec.Entry.AssigneeID, 0, cost)
	return nil
}

// IdempotencyRecord implements ports.CacheRepository.
func (r *CacheRepository) IdempotencyRecord(_ context.Context, scope, key string, now time.Time) (ports.IdempotencyRecord, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.idem[idemKey{scope, key}]
	if !ok || !rec.ExpiresAt.After(now) {
		return ports.IdempotencyRecord{}, false, nil
	}
	rec.Entry = cacheCopy(rec.Entry)
	return rec, true, nil
}

// PurgeIdempotency implements ports.CacheRepository.
func (r *CacheRepository) PurgeIdempotency(_ context.Context, now time.Time, limit int) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, rec := range r.idem {
		if n >= limit {
			break
		}
		if !rec.ExpiresAt.After(now) {
			r.dropRecordLocked(k, rec)
			n++
		}
	}
	return n, nil
}

// dropRecordLocked removes the record rec of k and what it counted.
func (r *CacheRepository) dropRecordLocked(k idemKey, rec ports.IdempotencyRecord) {
	delete(r.idem, k)
	r.addLocked(rec.Entry.AssigneeID, 0, -domain.RecordBytes(rec.Scope, rec.Key, rec.Entry))
}
