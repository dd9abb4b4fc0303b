package bunstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPurgeWhileReading sweeps CACHEGATE_BENCH_ROWS expired rows
// (default 10 000; the figure is 1 000 000) in batches of 1000,
// as the sweeper does, while four goroutines read live entries by id. It
// reports the sweep's rate and the longest any read waited:
//
//	CACHEGATE_BENCH_ROWS=1000000 go test -run '^$' -bench PurgeWhileReading -benchtime 1x ./adapters/bunstore/
func BenchmarkPurgeWhileReading(b *testing.B) {
	rows := benchRows(b)
	const batch, live = 1000, 1000
	for _, be := range benchBackends(b) {
		b.Run(be.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				db := be.open(b)
				seed(b, db, "bench_cache", rows, testNow.Add(time.Hour))
				repo := NewCacheRepository(db, "bench_cache")
				ctx := context.Background()
				for i := rows; i < rows+live; i++ {
					if err := repo.Create(ctx, testEntry(i), testNow); err != nil {
						b.Fatal(err)
					}
				}
				later := testNow.Add(2 * time.Hour)
				var (
					stop    atomic.Bool
					wg      sync.WaitGroup
					mu      sync.Mutex
					longest time.Duration
					reads   atomic.Int64
				)
				for g := range 4 {
					wg.Go(func() {
						i := g
						for !stop.Load() {
							i = (i + 7) % live
							start := time.Now()
							if _, err := repo.Get(ctx, testEntry(rows+i).ID, later); err != nil {
								b.Error(err)
								return
							}
							took := time.Since(start)
							reads.Add(1)
							mu.Lock()
							longest = max(longest, took)
							mu.Unlock()
						}
					})
				}
				b.StartTimer()
				start, removed := time.Now(), 0
				for {
					n, err := repo.Purge(ctx, later, batch)
					if err != nil {
						b.Fatal(err)
					}
					removed += n
					if n < batch {
						break
					}
				}
				elapsed := time.Since(start)
				b.StopTimer()
				stop.Store(true)
				wg.Wait()
				if removed != rows {
					b.Fatalf("purged %d rows, want %d", removed, rows)
				}
				b.ReportMetric(float64(removed)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(float64(longest.Microseconds())/1000, "max-read-ms")
				b.ReportMetric(float64(reads.Load()), "reads")
				_ = db.Close()
				b.StartTimer()
			}
		})
	}
}
