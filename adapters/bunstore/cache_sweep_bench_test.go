package bunstore

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// BenchmarkPurgeWhileReading sweeps CACHEGATE_BENCH_ROWS expired rows
// (default 10 000; the figure is 1 000 000) in batches of
// CACHEGATE_BENCH_BATCH (default 1000, the sweeper's default) with
// CACHEGATE_BENCH_PAUSE between batches (a Go duration, default none), as
// the sweeper does, while four goroutines read live entries by id. It
// reports the sweep's rate and the longest and 99th-percentile read, and
// the same two for the same readers during a second before the sweep
// (control-…): on a shared machine the control says how much of the
// longest read is the machine rather than the sweep.
//
//	CACHEGATE_BENCH_ROWS=1000000 go test -run '^$' -bench PurgeWhileReading -benchtime 1x ./adapters/bunstore/
func BenchmarkPurgeWhileReading(b *testing.B) {
	rows := benchRows(b)
	batch, pause := 1000, time.Duration(0)
	if n, err := strconv.Atoi(os.Getenv("CACHEGATE_BENCH_BATCH")); err == nil && n > 0 {
		batch = n
	}
	if d, err := time.ParseDuration(os.Getenv("CACHEGATE_BENCH_PAUSE")); err == nil && d > 0 {
		pause = d
	}
	const live = 1000
	for _, be := range benchBackends(b) {
		b.Run(be.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				db := be.open(b)
				seed(b, db, "bench_cache", rows, testNow.Add(time.Hour))
				repo := NewCacheRepository(db, "bench_cache")
				ctx := context.Background()
				for i := rows; i < rows+live; i++ {
					if err := repo.Create(ctx, testEntry(i), testNow, domain.Quota{}); err != nil {
						b.Fatal(err)
					}
				}
				later := testNow.Add(2 * time.Hour)
				var (
					stop  atomic.Bool
					wg    sync.WaitGroup
					mu    sync.Mutex
					reads []time.Duration
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
							mu.Lock()
							reads = append(reads, took)
							mu.Unlock()
						}
					})
				}
				// The control: the readers alone for a second.
				time.Sleep(time.Second)
				mu.Lock()
				control := reads
				reads = nil
				mu.Unlock()
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
					if pause > 0 {
						time.Sleep(pause)
					}
				}
				elapsed := time.Since(start)
				b.StopTimer()
				stop.Store(true)
				wg.Wait()
				if removed != rows {
					b.Fatalf("purged %d rows, want %d", removed, rows)
				}
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(float64(removed)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(ms(quantile(reads, 1)), "max-read-ms")
				b.ReportMetric(ms(quantile(reads, 0.99)), "p99-read-ms")
				b.ReportMetric(float64(len(reads)), "reads")
				b.ReportMetric(ms(quantile(control, 1)), "control-max-read-ms")
				b.ReportMetric(ms(quantile(control, 0.99)), "control-p99-read-ms")
				_ = db.Close()
				b.StartTimer()
			}
		})
	}
}

// quantile returns the q-quantile (0 < q ≤ 1) of ds, sorting ds; zero when
// ds is empty.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
