package bunstore

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// entryWriter is how a CacheRepository writes its entries, chosen once by
// NewCacheRepository (newEntryWriter), so that no method asks which
// database or mode it runs on (docs/storage.md, "One batcher"):
//
//   - directWriter: each write runs on the handle, as its own statements
//     (PostgreSQL without create batches, a handle with no write gate, or
//     WithUngroupedWrites);
//   - groupWriter: every entry write runs in a transaction of the SQLite
//     handle's write group (internal/writegate), with the statements of the
//     repository prepared once (cache_quota.go, sqliteWrites);
//   - batchWriter: PostgreSQL, creates batched (create_batch.go), every
//     other write direct.
type entryWriter interface {
	// write runs fn, a write of one entry of the bounded call call, with
	// the database it must use.
	write(ctx context.Context, call *bound.Call, fn func(ctx context.Context, db bun.IDB) error) error
	// create writes e, normalized, under q.
	create(ctx context.Context, call *bound.Call, e domain.Entry, now time.Time, q domain.Quota) error
	// inTx runs fn in a transaction that holds its statements together
	// (CreateIdempotent's record and entry).
	inTx(ctx context.Context, call *bound.Call, fn func(ctx context.Context, db bun.IDB) error) error
	// groupsCreates reports whether a create waits for a group or a batch
	// (then its call enters with bound.Bounds.EnterGrouped).
	groupsCreates() bool
	// statements returns the prepared statements of the entry writes,
	// usable inside the writer's transactions, or nil when writes send
	// their text.
	statements() *engine.Prepared
}

var (
	_ entryWriter = directWriter{}
	_ entryWriter = groupWriter{}
	_ entryWriter = batchWriter{}
)

// newEntryWriter returns the writer of r, on db: grouped at db's write
// gate (SQLite), batching creates (PostgreSQL), or, WithUngroupedWrites or
// on a handle with neither, direct.
func newEntryWriter(r *CacheRepository, db *DB) entryWriter {
	direct := directWriter{r: r}
	switch {
	case db.ungrouped:
		return direct
	case r.eng.BatchesCreates():
		return batchWriter{directWriter: direct, creates: newCreateBatcher(r)}
	}
	if group := db.entries; group != nil {
		return groupWriter{r: r, group: group, prepared: sqliteWrites(db, r.name), refused: newRefusedLately()}
	}
	return direct
}

// directWriter runs every write on the repository's handle.
type directWriter struct{ r *CacheRepository }

func (w directWriter) write(ctx context.Context, _ *bound.Call, fn func(ctx context.Context, db bun.IDB) error) error {
	return fn(ctx, w.r.db)
}

func (w directWriter) create(ctx context.Context, _ *bound.Call, e domain.Entry, now time.Time, q domain.Quota) error {
	return w.r.create(ctx, w.r.db, e, now, q, 0)
}

func (w directWriter) inTx(ctx context.Context, _ *bound.Call, fn func(ctx context.Context, db bun.IDB) error) error {
	return w.r.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
}

func (directWriter) groupsCreates() bool { return false }

func (directWriter) statements() *engine.Prepared { return nil }

// groupWriter runs every write in the SQLite handle's write group.
type groupWriter struct {
	r        *CacheRepository
	group    *batch.Batcher[writegate.Write]
	prepared *engine.Prepared
	// refused remembers the assignees whose creates the quota refused
	// lately (quota_early.go).
	refused *refusedLately
}

// write runs fn in a transaction shared with the other writes of the
// handle's group, in a savepoint of its own.
func (w groupWriter) write(ctx context.Context, call *bound.Call, fn func(ctx context.Context, db bun.IDB) error) error {
	// Prepared before the group's transaction takes a connection: an
	// sqlite::memory: handle has only that one.
	if _, err := w.prepared.Get(ctx); err != nil {
		return dberr.Wrap("prepare the entry writes", err)
	}
	return w.group.Do(ctx, writegate.Write{DB: w.r.handle.sql, Fn: fn, Call: call.Hold()})
}

func (w groupWriter) create(ctx context.Context, call *bound.Call, e domain.Entry, now time.Time, q domain.Quota) error {
	// The closure holds r, not w: one pointer to capture, not three words.
	r := w.r
	if g := newQuotaGuard(q, nil, e); g != nil && w.refused.recent(e.AssigneeID, time.Now()) {
		if err := r.refuseEarly(ctx, e, g, ports.IdempotencyRecord{}, now); err != nil {
			return err
		}
	}
	err := w.write(ctx, call, func(ctx context.Context, db bun.IDB) error { return r.create(ctx, db, e, now, q, 0) })
	if errors.Is(err, domain.ErrCacheQuotaExceeded) {
		w.refused.note(e.AssigneeID, time.Now())
	}
	return err
}

// inTx is write: the write's savepoint holds its statements together.
func (w groupWriter) inTx(ctx context.Context, call *bound.Call, fn func(ctx context.Context, db bun.IDB) error) error {
	return w.write(ctx, call, fn)
}

func (groupWriter) groupsCreates() bool { return true }

func (w groupWriter) statements() *engine.Prepared { return w.prepared }

// batchWriter batches creates on PostgreSQL (create_batch.go, where its
// create is) and runs every other write directly.
type batchWriter struct {
	directWriter
	creates *batch.Batcher[*queuedCreate]
}

func (batchWriter) groupsCreates() bool { return true }
