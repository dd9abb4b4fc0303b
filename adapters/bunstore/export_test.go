package bunstore

import (
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// RevokedFamiliesQuery is the query of RefreshStore.RevokedFamilies, for
// the query-plan test.
const RevokedFamiliesQuery = revokedFamiliesQuery

// onPostgres reports whether db's engine is PostgreSQL's, for tests that
// measure or check a PostgreSQL-only detail.
func onPostgres(db *DB) bool { return db.sql.Dialect().Name() == dialect.PG }

// writeGroup returns the SQLite write group r's writer runs in, or nil
// when it runs none (cache_writer.go).
func (r *CacheRepository) writeGroup() *batch.Batcher[writegate.Write] {
	w, _ := r.writer.(groupWriter)
	return w.group
}

// createBatches returns the batcher of r's creates on PostgreSQL, or nil
// when its writer batches none (cache_writer.go).
func (r *CacheRepository) createBatches() *batch.Batcher[*queuedCreate] {
	w, _ := r.writer.(batchWriter)
	return w.creates
}

// PGTimeLiteral is the timestamptz literal a query argument of time t is
// written as on PostgreSQL.
func PGTimeLiteral(t time.Time) string {
	b, _ := engine.TimeArg(t).(schema.QueryAppender).AppendQuery(schema.NewQueryGen(pgdialect.New()), nil)
	return string(b)
}

// EvictQuery is the statement of RefreshStore.EvictSessions, for its
// query plan.
const EvictQuery = evictQuery

// with returns a handle on db's database, its gate and its write group,
// with the bounds opts set: for tests that need stores of other bounds
// beside each other.
func (db *DB) with(opts ...Option) *DB {
	cfg := openConfig{bounds: db.bounds}
	for _, o := range opts {
		o(&cfg)
	}
	h := *db
	h.bounds = fillBounds(cfg.bounds)
	if cfg.callerBound {
		h.bounds.Callers = newCallerLimit(db, cfg.perCaller, cfg.budget)
	}
	return &h
}

// newCallerLimit is the caller bound Open makes for db.
func newCallerLimit(db *DB, n int, budget *Budget) *callers.Limit {
	return callers.New(db.sql.DB.Stats().MaxOpenConnections, n, budget)
}

// withCallerLimit makes the stores of a handle share l.
func withCallerLimit(l *callers.Limit) Option {
	return func(c *openConfig) { c.bounds.Callers = l }
}
