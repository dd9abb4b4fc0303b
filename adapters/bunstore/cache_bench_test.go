package bunstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// The benchmarks run on SQLite (a file, with the driver Open uses) and, when
// CACHEGATE_TEST_POSTGRES is set, on PostgreSQL. CACHEGATE_BENCH_ROWS sets
// how many rows BenchmarkGetByID reads among (default 10000; 1000000 takes
// a while to seed), CACHEGATE_BENCH_CONNS the pool size (default: Open's).
//
//	go test -run '^$' -bench . -benchmem ./adapters/bunstore/

type benchBackend struct {
	name string
	open func(b *testing.B) *DB
}

func benchBackends(b *testing.B) []benchBackend {
	var opts []Option
	if n, err := strconv.Atoi(os.Getenv("CACHEGATE_BENCH_CONNS")); err == nil {
		opts = append(opts, WithMaxOpenConns(n))
	}
	backends := []benchBackend{{"sqlite-modernc", func(b *testing.B) *DB {
		return benchOpen(b, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"), opts...)
	}}}
	if os.Getenv(pgtest.EnvVar) != "" {
		backends = append(backends, benchBackend{"postgres", func(b *testing.B) *DB {
			return benchOpen(b, pgtest.New(b), opts...)
		}})
	}
	return backends
}

func benchOpen(b *testing.B, dsn string, opts ...Option) *DB {
	b.Helper()
	db, err := Open(context.Background(), dsn, opts...)
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if err := Migrate(context.Background(), db, []string{"bench_cache"}); err != nil {
		b.Fatalf("Migrate: %v", err)
	}
	return db
}

func benchRows(b *testing.B) int {
	if n, err := strconv.Atoi(os.Getenv("CACHEGATE_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

// BenchmarkGetByID reads live entries by id, one goroutine ("serial") and
// eight at once ("parallel").
func BenchmarkGetByID(b *testing.B) {
	rows := benchRows(b)
	for _, be := range benchBackends(b) {
		db := be.open(b)
		start := time.Now()
		seed(b, db, "bench_cache", rows, time.Time{})
		b.Logf("%s: seeded %d rows in %v", be.name, rows, time.Since(start).Round(time.Millisecond))
		repo := NewCacheRepository(db, "bench_cache")
		ctx := context.Background()
		b.Run(fmt.Sprintf("%s/rows=%d/serial", be.name, rows), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i = (i + 7919) % rows
				if _, err := repo.Get(ctx, testEntry(i).ID, testNow); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%s/rows=%d/parallel", be.name, rows), func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			var seq atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				i := int(seq.Add(1)) * 104729
				for pb.Next() {
					i = (i + 7919) % rows
					if _, err := repo.Get(ctx, testEntry(i).ID, testNow); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCreate inserts new entries, one goroutine ("serial") and eight
// at once ("parallel"), spread over 100 assignees; "parallel-one-assignee"
// gives every entry the same assignee, the case where writers of one
// assignee meet. Each runs under a quota that never refuses (the checked
// statement, as with the default quota) and, "-unlimited", under none.
func BenchmarkCreate(b *testing.B) {
	for _, be := range benchBackends(b) {
		repo := NewCacheRepository(be.open(b), "bench_cache")
		ctx := context.Background()
		var seq atomic.Int64
		for _, quota := range []struct {
			suffix string
			q      domain.Quota
		}{{"", domain.Quota{MaxEntries: 1 << 40, MaxBytes: 1 << 50}}, {"-unlimited", domain.Quota{}}} {
			create := func() error {
				return repo.Create(ctx, testEntry(int(seq.Add(1))), testNow, quota.q)
			}
			createOne := func() error {
				e := testEntry(int(seq.Add(1)))
				e.AssigneeID = testEntry(0).AssigneeID
				return repo.Create(ctx, e, testNow, quota.q)
			}
			b.Run(be.name+"/serial"+quota.suffix, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := create(); err != nil {
						b.Fatal(err)
					}
				}
			})
			for _, p := range []struct {
				name   string
				create func() error
			}{{"parallel", create}, {"parallel-one-assignee", createOne}} {
				b.Run(be.name+"/"+p.name+quota.suffix, func(b *testing.B) {
					b.ReportAllocs()
					b.SetParallelism(4)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := p.create(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
			}
		}
	}
}
