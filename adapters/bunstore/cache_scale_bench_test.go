package bunstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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
//
// CACHEGATE_BENCH_SQLITE_DIR, an existing directory, keeps SQLite's
// seeded file there (scale-<rows>.db) and reuses it on the next run, so
// that several runs, or builds, read the same 10 M rows without seeding
// them again (2.5 to 5 minutes). The directory is the caller's to remove.
func BenchmarkScale(b *testing.B) {
	rows := benchRows(b)
	for _, be := range benchBackends(b) {
		db, seeded := scaleOpen(b, be, rows)
		perEntry := 0.0
		if !seeded {
			start := time.Now()
			seedDated(b, db, "bench_cache", rows)
			b.Logf("%s: seeded %d rows in %v", be.name, rows, time.Since(start).Round(time.Millisecond))
			// Measured once, when seeded: dbstat reads every page of the
			// file (minutes at 10 M when the system's cache lost it).
			perEntry = float64(tableBytes(b, db, "bench_cache")) / float64(rows)
		}
		repo := NewCacheRepository(db, "bench_cache")
		ctx := context.Background()
		owner := fmt.Sprintf("a55194ee-0000-4000-8000-%012d", 42)
		b.Run(fmt.Sprintf("%s/rows=%d/get", be.name, rows), func(b *testing.B) {
			b.ReportAllocs()
			// The steady state of a running service, not the first reads
			// of a new connection: reads of other entries first, which
			// bring the b-trees' upper pages into the page cache and, in a
			// large table, none of the leaves read below (the same stride,
			// half a stride away from every entry the loop reads; at
			// 10 000 entries the loop itself reads every leaf many times).
			for i, n := 7919/2, 0; n < scaleWarmReads; n++ {
				i = (i + 7919) % rows
				if _, err := repo.Get(ctx, testEntry(i).ID, testNow); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				i = (i + 7919) % rows
				if _, err := repo.Get(ctx, testEntry(i).ID, testNow); err != nil {
					b.Fatal(err)
				}
			}
			reportSize(b, perEntry)
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
			reportSize(b, perEntry)
		})
	}
}

// scaleWarmReads is how many point reads BenchmarkScale makes before it
// measures them.
const scaleWarmReads = 5000

func reportSize(b *testing.B, perEntry float64) {
	if perEntry > 0 {
		b.ReportMetric(perEntry, "db-bytes/entry")
	}
}

// scaleOpen opens be's database for BenchmarkScale and reports whether it
// already holds rows entries: SQLite's file kept in
// CACHEGATE_BENCH_SQLITE_DIR by an earlier run.
func scaleOpen(b *testing.B, be benchBackend, rows int) (*DB, bool) {
	dir := os.Getenv("CACHEGATE_BENCH_SQLITE_DIR")
	if dir == "" || be.name != "sqlite-modernc" {
		return be.open(b), false
	}
	db := benchOpen(b, "sqlite:"+filepath.Join(dir, fmt.Sprintf("scale-%d.db", rows)))
	// seedDated writes entries 0 to rows-1 in order, so its last entry
	// tells a full file, where count(*) would read a whole index.
	has := func(i int) bool {
		n, err := db.sql.NewSelect().TableExpr("bench_cache").Where("id = ?", testEntry(i).ID).Count(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		return n > 0
	}
	switch {
	case has(rows - 1):
		return db, true
	case has(0):
		b.Fatalf("%s: scale-%d.db is incomplete: remove it", dir, rows)
	}
	return db, false
}

// tableBytes returns the bytes that table and its indexes take.
func tableBytes(tb testing.TB, db *DB, table string) int64 {
	tb.Helper()
	q := "SELECT pg_total_relation_size(?)"
	if !onPostgres(db) {
		// dbstat has a line per page of every b-tree; sqlite_master names
		// the table's own, its indexes included.
		q = "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)"
	}
	var n int64
	if err := db.sql.QueryRowContext(context.Background(), q, table).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}
