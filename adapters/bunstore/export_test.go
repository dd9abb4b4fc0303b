package bunstore

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
)

// RevokedFamiliesQuery is the query of RefreshStore.RevokedFamilies, for
// the query-plan test.
const RevokedFamiliesQuery = revokedFamiliesQuery

// onPostgres reports whether db's engine is PostgreSQL's, for tests that
// measure or check a PostgreSQL-only detail.
func onPostgres(db bun.IDB) bool { _, ok := engineOf(db).(postgresEngine); return ok }

// writeGroup returns the SQLite write group r's writer runs in, or nil
// when it runs none (cache_writer.go).
func (r *CacheRepository) writeGroup() *batch.Batcher[groupWrite] {
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
func PGTimeLiteral(t time.Time) string { return string(appendPGTime(nil, t.UTC())) }

// EvictQuery is the statement of RefreshStore.EvictSessions, for its
// query plan.
const EvictQuery = evictQuery
