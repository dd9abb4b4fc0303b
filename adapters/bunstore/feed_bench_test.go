package bunstore

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// BenchmarkCreateWithIdleFeed creates entries, four goroutines at once,
// through a repository the process's change feed observes, the feed
// running with no subscription (as under a POST load nobody watches);
// "no-feed" is the same without a feed. Their difference is what the
// feed costs the writes.
//
//	go test -run '^$' -bench CreateWithIdleFeed -cpu 2 ./adapters/bunstore/
func BenchmarkCreateWithIdleFeed(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, withFeed := range []bool{false, true} {
			name := be.name + "/no-feed"
			if withFeed {
				name = be.name + "/idle-feed"
			}
			b.Run(name, func(b *testing.B) {
				db := be.open(b)
				var repo ports.CacheRepository = NewCacheRepository(db, "bench_cache")
				if withFeed {
					feed, err := background.NewFeed(background.FeedConfig{Log: NewChangeLog(db), Clock: system.Clock{}})
					if err != nil {
						b.Fatal(err)
					}
					ctx, stop := context.WithCancel(context.Background())
					done := make(chan struct{})
					go func() { defer close(done); _ = feed.Run(ctx) }()
					b.Cleanup(func() { stop(); <-done })
					if err := feed.CatchUp(ctx); err != nil {
						b.Fatal(err)
					}
					repo = feed.Observe(repo)
				}
				var seq atomic.Int64
				b.ReportAllocs()
				// CPU time tells more than wall time on a shared machine.
				cpu := processCPU()
				b.Cleanup(func() { b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op") })
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := repo.Create(context.Background(), testEntry(int(seq.Add(1))), testNow, domain.Quota{}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// processCPU is the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
