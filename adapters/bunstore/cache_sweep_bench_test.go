package bunstore

import (
	"cmp"
	"context"
	"fmt"
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
// between two batches as long as the last took, as background.Sweeper
// does (CACHEGATE_BENCH_REST, a factor, rests that many times as long;
// CACHEGATE_BENCH_PAUSE, a Go duration, sets a fixed rest instead; 0s:
// none), while four goroutines read live entries by id.
//
// The readers run in three phases:
//
//   - peak: one second as fast as they can (closed loop), which gives the
//     machine's peak rate of point reads (peak-reads/s);
//   - control: two seconds (CACHEGATE_BENCH_CONTROL, a Go duration) at
//     CACHEGATE_BENCH_LOAD of that peak (default 0.5, the issue's "half of
//     peak load"), without a sweep;
//   - sweep: the same rate while the sweep runs.
//
// At a fraction of peak the readers keep a schedule (open loop): a read's
// time runs from when it was due, so a stall counts in full, with the
// reads it held back. It reports the sweep's rate and, for the control and
// the sweep, the longest and the 99th-percentile read. The control says
// how much of the longest read is the machine rather than the sweep.
// CACHEGATE_BENCH_TRACE=1 logs the ten longest reads of the control and
// of the sweep, each with its time (to compare with the server's log) and
// the batch it met (running, or the last one before it), and the five
// longest batches; run it with -v, or go test cuts the lines.
// CACHEGATE_BENCH_LOAD=1 keeps the readers in a closed loop throughout:
// on two cores four readers, the database's backends and the sweep then
// queue for the CPU, and the longest read measures that queue (in the
// control too), not the sweep.
//
//	CACHEGATE_BENCH_ROWS=1000000 go test -tags nomsgpack,grpcnotrace -run '^$' -bench PurgeWhileReading -benchtime 1x ./adapters/bunstore/
func BenchmarkPurgeWhileReading(b *testing.B) {
	rows := benchRows(b)
	batch, pause, load, restFactor, controlFor := 1000, time.Duration(-1), 0.5, 1.0, 2*time.Second
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
	if d, err := time.ParseDuration(os.Getenv("CACHEGATE_BENCH_CONTROL")); err == nil && d > 0 {
		controlFor = d
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
				controlReads := readPhase(readers, every, func() { time.Sleep(controlFor) }, read)

				b.StartTimer()
				var (
					start   = time.Now()
					removed int
					elapsed time.Duration
					spans   []batchSpan
				)
				reads := readPhase(readers, every, func() {
					for {
						began := time.Now()
						n, err := repo.Purge(ctx, later, batch)
						spans = append(spans, batchSpan{began, time.Since(began)})
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
				if os.Getenv("CACHEGATE_BENCH_TRACE") != "" {
					traceReads(b, "control", controlReads, nil)
					traceReads(b, "sweep", reads, spans)
				}
				control, took := tookOf(controlReads), tookOf(reads)
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(float64(removed)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(rate, "peak-reads/s")
				b.ReportMetric(float64(len(reads))/elapsed.Seconds(), "reads/s")
				b.ReportMetric(ms(quantile(took, 1)), "max-read-ms")
				b.ReportMetric(ms(quantile(took, 0.99)), "p99-read-ms")
				b.ReportMetric(ms(quantile(control, 1)), "control-max-read-ms")
				b.ReportMetric(ms(quantile(control, 0.99)), "control-p99-read-ms")
				_ = db.Close()
				b.StartTimer()
			}
		})
	}
}

// readSample is one read of readPhase: when it was due and how long it
// took from then.
type readSample struct {
	due  time.Time
	took time.Duration
}

// tookOf returns how long each of rs took.
func tookOf(rs []readSample) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = r.took
	}
	return out
}

// batchSpan is one Purge of the sweep.
type batchSpan struct {
	began time.Time
	took  time.Duration
}

// traceReads logs the ten longest reads of a phase, each with the batch
// running when it was due or else the last one before, and the five
// longest batches.
func traceReads(b *testing.B, phase string, reads []readSample, spans []batchSpan) {
	rs := slices.Clone(reads)
	slices.SortFunc(rs, func(x, y readSample) int { return cmp.Compare(y.took, x.took) })
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	for _, r := range rs[:min(10, len(rs))] {
		i, _ := slices.BinarySearchFunc(spans, r.due, func(s batchSpan, t time.Time) int { return s.began.Compare(t) })
		where := "no batch before"
		if i > 0 {
			s := spans[i-1]
			if end := s.began.Add(s.took); end.After(r.due) {
				where = fmt.Sprintf("batch %d running for %s (took %s)", i-1, ms(r.due.Sub(s.began)), ms(s.took))
			} else {
				where = fmt.Sprintf("resting %s after batch %d (took %s)", ms(r.due.Sub(end)), i-1, ms(s.took))
			}
		}
		b.Logf("%s: read due %s took %s: %s", phase, r.due.UTC().Format("15:04:05.000000"), ms(r.took), where)
	}
	ss := slices.Clone(spans)
	slices.SortFunc(ss, func(x, y batchSpan) int { return cmp.Compare(y.took, x.took) })
	for _, s := range ss[:min(5, len(ss))] {
		b.Logf("batch at %s took %s", s.began.UTC().Format("15:04:05.000000"), ms(s.took))
	}
}

// readPhase runs n readers until during returns, and returns each read,
// with how long it took. With every zero the readers run in a closed loop (the
// next read starts when the last ends); otherwise each reader keeps a
// schedule of one read every every, and a read's time runs from when it
// was due, so one that a stall held back counts the stall too.
func readPhase(n int, every time.Duration, during func(), read func(i int)) []readSample {
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		mu    sync.Mutex
		reads []readSample
	)
	for g := range n {
		wg.Go(func() {
			var mine []readSample
			due := time.Now().Add(time.Duration(g) * every / time.Duration(n))
			for i := g; !stop.Load(); i += 7 {
				if every > 0 {
					time.Sleep(time.Until(due))
				} else {
					due = time.Now()
				}
				read(i)
				mine = append(mine, readSample{due, time.Since(due)})
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
