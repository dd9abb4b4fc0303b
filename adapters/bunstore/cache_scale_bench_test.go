package bunstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// BenchmarkScale seeds CACHEGATE_BENCH_ROWS entries of 100 assignees
// directly (seedDated: multi-row INSERTs, not the service's API) and
// measures the two reads that must not slow down as the table grows
// (issue 14: within 1.5× of the same at 10 000 entries):
//
//   - get: a point read by id, the ids spread over the whole table;
//   - page: the first page (100 entries) of one assignee's list.
//
// Each reports the table's size per entry (table and indexes, without the
// change log, which the sweeper keeps to its retention) as db-bytes/entry.
//
//	CACHEGATE_BENCH_ROWS=10000000 go test -tags nomsgpack,grpcnotrace -run '^$' -bench BenchmarkScale -benchtime 2000x -timeout 60m ./adapters/bunstore/
func BenchmarkScale(b *testing.B) {
	rows := benchRows(b)
	for _, be := range benchBackends(b) {
		db := be.open(b)
		start := time.Now()
		seedDated(b, db, "bench_cache", rows)
		b.Logf("%s: seeded %d rows in %v", be.name, rows, time.Since(start).Round(time.Millisecond))
		perEntry := float64(tableBytes(b, db, "bench_cache")) / float64(rows)
		repo := NewCacheRepository(db, "bench_cache")
		ctx := context.Background()
		owner := fmt.Sprintf("a55194ee-0000-4000-8000-%012d", 42)
		b.Run(fmt.Sprintf("%s/rows=%d/get", be.name, rows), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i = (i + 7919) % rows
				if _, err := repo.Get(ctx, testEntry(i).ID, testNow); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(perEntry, "db-bytes/entry")
		})
		b.Run(fmt.Sprintf("%s/rows=%d/page", be.name, rows), func(b *testing.B) {
			b.ReportAllocs()
			q := ports.ListQuery{Owner: owner, Limit: 100}
			for b.Loop() {
				n := 0
				if _, err := repo.List(ctx, q, testNow, func(domain.Entry) error { n++; return nil }); err != nil || n == 0 {
					b.Fatalf("%d entries, %v", n, err)
				}
			}
			b.ReportMetric(perEntry, "db-bytes/entry")
		})
	}
}

// tableBytes returns the bytes that table and its indexes take.
func tableBytes(tb testing.TB, db *bun.DB, table string) int64 {
	tb.Helper()
	q := "SELECT pg_total_relation_size(?)"
	if !isPostgres(db) {
		// dbstat has a line per page of every b-tree; sqlite_master names
		// the table's own, its indexes included.
		q = "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)"
	}
	var n int64
	if err := db.QueryRowContext(context.Background(), q, table).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}
