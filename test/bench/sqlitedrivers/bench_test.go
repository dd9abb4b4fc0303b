package sqlitedrivers

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3"
	_ "modernc.org/sqlite"          // registers "sqlite"
)

// The connection settings of bunstore.Open for an SQLite file, which both
// drivers read from the URI.
const params = "?_busy_timeout=5000&_foreign_keys=1&_txlock=immediate&_journal_mode=WAL&_synchronous=NORMAL"

var drivers = []struct{ name, driver string }{{"modernc", "sqlite"}, {"mattn", "sqlite3"}}

const rows = 10_000

var now = time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)

func entry(i int) domain.Entry {
	return domain.Entry{
		ID:          fmt.Sprintf("0190a5c0-0000-7000-8000-%012d", i),
		Key:         fmt.Sprintf("key-%d", i),
		Type:        "type",
		AssigneeID:  fmt.Sprintf("a55194ee-0000-4000-8000-%012d", i%100),
		Data:        []byte(`{"value":"some cached text of a typical size","n":` + fmt.Sprint(i) + `}`),
		Version:     1,
		DateCreated: now,
		DateUpdated: now,
	}
}

func open(b *testing.B, driver string) *bunstore.CacheRepository {
	b.Helper()
	sqldb, err := sql.Open(driver, "file:"+filepath.Join(b.TempDir(), "bench.db")+params)
	if err != nil {
		b.Fatal(err)
	}
	sqldb.SetMaxOpenConns(4)
	sqldb.SetMaxIdleConns(4)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	b.Cleanup(func() { _ = db.Close() })
	if err := bunstore.Migrate(context.Background(), db, []string{"bench_cache"}); err != nil {
		b.Fatal(err)
	}
	return bunstore.NewCacheRepository(db, "bench_cache")
}

func BenchmarkGetByID(b *testing.B) {
	ctx := context.Background()
	for _, d := range drivers {
		repo := open(b, d.driver)
		for i := range rows {
			if err := repo.Create(ctx, entry(i), now, domain.Quota{}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(d.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i = (i + 7919) % rows
				if _, err := repo.Get(ctx, entry(i).ID, now); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			var seq atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				i := int(seq.Add(1)) * 104729
				for pb.Next() {
					i = (i + 7919) % rows
					if _, err := repo.Get(ctx, entry(i).ID, now); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	for _, d := range drivers {
		repo := open(b, d.driver)
		var seq atomic.Int64
		create := func() error { return repo.Create(ctx, entry(int(seq.Add(1))), now, domain.Quota{}) }
		b.Run(d.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := create(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := create(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
