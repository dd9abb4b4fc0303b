package bunstore

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/readcache"
	"github.com/cachegate/cachegate/domain"
)

// pointReadCacheBytes bounds the entries one repository keeps of an SQLite
// file (the sum of their ids, keys, types, assignees and data, plus
// entryOverhead each, cache_page.go, and the map's slot).
const pointReadCacheBytes = 8 << 20

// pointReads are a repository's reads by id on an SQLite file: a
// prepared statement and the entries read since the file last changed
// (internal/readcache; ARCHITECTURE.md, "The entry cache of SQLite point
// reads"). Each Get first reads the file's state through the handle's
// watch, after the Get began (the WAL-index header, or the data version);
// an entry kept in that same state is the answer, tested for expiry at the
// caller's now. Any commit to the file changes the state, so a write
// acknowledged before a Get began is always seen by it. A hit holds no
// connection of the pool, so it takes no place of its caller's and is not
// charged to its budget.
type pointReads struct {
	watch *readcache.Watch
	cache *readcache.Cache[domain.Entry]
	// byID is the prepared read; nil when the handle has query hooks
	// (tracing), so that a read that reaches the database goes through
	// Bun and has its statement's span.
	byID *engine.Prepared
	// hits counts the answers from the cache, for tests.
	hits atomic.Int64
}

// newPointReads returns the point reads of table, or nil when db is not an
// SQLite file.
func newPointReads(db *DB, table string) *pointReads {
	if db.watch == nil {
		return nil
	}
	p := &pointReads{watch: db.watch, cache: readcache.New(pointReadCacheBytes, entrySize)}
	if !db.hooked {
		p.byID = engine.NewPrepared(db.sql, db.eng,
			"SELECT "+cacheColumns+" FROM "+engine.QuoteIdent(table)+" WHERE id = ? AND date_deleted IS NULL")
	}
	return p
}

// get is Get through the cache. When the watch cannot answer (the file
// is unreadable, ctx ended), the read goes to the database as without a
// cache and meets the same failure there, bounded and translated.
func (p *pointReads) get(ctx context.Context, r *CacheRepository, id string, now time.Time) (domain.Entry, error) {
	s, err := p.watch.Now(ctx)
	if err != nil {
		return r.getBounded(ctx, id, now)
	}
	if e, ok := p.cache.Get(s, id); ok {
		// The file answered: the database is up, which a caller bound
		// that waits for a place wants to know (internal/callers).
		r.bounds.Callers.Answered()
		p.hits.Add(1)
		return pointAnswer(cloneEntry(e), nil, now)
	}
	e, err := r.getBounded(ctx, id, now)
	if err == nil {
		p.cache.Put(s, id, cloneEntry(e))
	}
	return e, err
}

// read reads the live row id with the prepared statement, or through Bun
// when the handle traces its queries.
func (p *pointReads) read(ctx context.Context, r *CacheRepository, id string, now time.Time) (domain.Entry, error) {
	if p.byID == nil {
		return r.get(ctx, r.db, id, now)
	}
	stmts, err := p.byID.Get(ctx)
	if err != nil {
		return domain.Entry{}, dberr.Wrap("prepare the entry read", err)
	}
	var e domain.Entry
	err = dberr.WithRetry(ctx, func() error {
		var err error
		e, err = scanEntry(stmts[0].QueryRowContext(ctx, id))
		return err
	})
	return pointAnswer(e, err, now)
}

// cloneEntry copies what e points to, so that neither the cache nor its
// reader changes what the other holds.
func cloneEntry(e domain.Entry) domain.Entry {
	e.Data = append([]byte(nil), e.Data...)
	if e.ExpiresAt != nil {
		t := *e.ExpiresAt
		e.ExpiresAt = &t
	}
	if e.DateDeleted != nil {
		t := *e.DateDeleted
		e.DateDeleted = &t
	}
	return e
}

// entrySize is what e costs in the cache (pointReadCacheBytes).
func entrySize(e domain.Entry) int {
	return len(e.ID) + len(e.Key) + len(e.Type) + len(e.AssigneeID) + len(e.Data) + entryOverhead + 32
}
