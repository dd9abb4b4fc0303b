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
// CACHEGATE_BENCH_BATCH (default 1000, the sweeper's default), resting
// between two batches as long as the last took, as application.Sweeper
// does (CACHEGATE_BENCH_REST, a factor, rests that many times as long;
// CACHEGATE_BENCH_PAUSE, a Go duration, sets a fixed rest instead; 0s:
// none), while four goroutines read live entries by id.
//
// The readers run in three phases:
//
//   - peak: one second as fast as they can (closed loop), which gives the
//     machine's peak rate of point reads (peak-reads/s);
//   - control: two seconds at CACHEGATE_BENCH_LOAD of that peak (default
//     0.5, the "half of peak load"), without a sweep;
//   - sweep: the same rate while the sweep runs.
//
// At a fraction of peak the readers keep a schedule (open loop): a read's
// time runs from when it was due, so a stall counts in full, with the
// reads it held back. It reports the sweep's rate and, for the control and
// the sweep, the longest and the 99th-percentile read. The control says
// how much of the longest read is the machine rather than the sweep.
// CACHEGATE_BENCH_LOAD=1 keeps the readers in a closed loop throughout:
// on two cores four readers, the database's backends and the sweep then
// queue for the CPU, and the longest read measures that queue (in the
// control too), not the sweep.
//
//	CACHEGATE_BENCH_ROWS=1000000 go test -tags nomsgpack,grpcnotrace -run '^$' -bench PurgeWhileReading -benchtime 1x ./adapters/bunstore/
func BenchmarkPurgeWhileReading(b *testing.B) {
	rows := benchRows(b)
	batch, pause, load, restFactor := 1000, time.Duration(-1), 0.5, 1.0
	if n, err := strconv.Atoi(os.Getenv("CACHEGATE_BENCH_BATCH")); err == nil && n > 0 {
		batch = n
	}
	if d, err := time.ParseDuration(os.Getenv("CACHEGATE_BENCH_PAUSE")); err == nil && d >= 0 {
		pause = d
	}
	if f, err := strconv.ParseFloat(os.Getenv("CACHEGATE_BENCH_LOAD"), 64); err == nil && f > 0 && f <= 1 {
		load = f
	}
	if f, err := strconv.ParseFloat(os.Getenv("CACHEGATE_BENCH_REST"), 64); err == nil && f >= 0 {
		restFactor = f
	}
	const live, readers = 1000, 4
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
				read := func(i int) {
					if _, err := repo.Get(ctx, testEntry(rows+i%live).ID, later); err != nil {
						b.Error(err)
					}
				}

				peak := readPhase(readers, 0, func() { time.Sleep(time.Second) }, read)
				rate := float64(len(peak)) / time.Second.Seconds()
				var every time.Duration // per reader; zero: closed loop
				if load < 1 {
					every = time.Duration(float64(readers) / (rate * load) * float64(time.Second))
				}
				control := readPhase(readers, every, func() { time.Sleep(2 * time.Second) }, read)

				b.StartTimer()
				var (
					start   = time.Now()
					removed int
					elapsed time.Duration
				)
				reads := readPhase(readers, every, func() {
					for {
						began := time.Now()
						n, err := repo.Purge(ctx, later, batch)
						if err != nil {
							b.Error(err)
							return
						}
						removed += n
						if n < batch {
							break
						}
						if pause < 0 {
							time.Sleep(time.Duration(restFactor * float64(time.Since(began))))
						} else {
							time.Sleep(pause)
						}
					}
					elapsed = time.Since(start)
				}, read)
				b.StopTimer()
				if removed != rows {
					b.Fatalf("purged %d rows, want %d", removed, rows)
				}
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(float64(removed)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(rate, "peak-reads/s")
				b.ReportMetric(float64(len(reads))/elapsed.Seconds(), "reads/s")
				b.ReportMetric(ms(quantile(reads, 1)), "max-read-ms")
				b.ReportMetric(ms(quantile(reads, 0.99)), "p99-read-ms")
				b.ReportMetric(ms(quantile(control, 1)), "control-max-read-ms")
				b.ReportMetric(ms(quantile(control, 0.99)), "control-p99-read-ms")
				_ = db.Close()
				b.StartTimer()
			}
		})
	}
}

// readPhase runs n readers until during returns, and returns how long
// each read took. With every zero the readers run in a closed loop (the
// next read starts when the last ends); otherwise each reader keeps a
// schedule of one read every every, and a read's time runs from when it
// was due, so one that a stall held back counts the stall too.
func readPhase(n int, every time.Duration, during func(), read func(i int)) []time.Duration {
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		mu    sync.Mutex
		reads []time.Duration
	)
	for g := range n {
		wg.Go(func() {
			var mine []time.Duration
			due := time.Now().Add(time.Duration(g) * every / time.Duration(n))
			for i := g; !stop.Load(); i += 7 {
				if every > 0 {
					time.Sleep(time.Until(due))
				} else {
					due = time.Now()
				}
				read(i)
				mine = append(mine, time.Since(due))
				due = due.Add(every)
			}
			mu.Lock()
			reads = append(reads, mine...)
			mu.Unlock()
		})
	}
	during()
	stop.Store(true)
	wg.Wait()
	return reads
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
