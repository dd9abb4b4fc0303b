package bunstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// BenchmarkCreateIdempotent is BenchmarkCreate's "serial" and "parallel"
// (under the default quota) with an Idempotency-Key record written in the
// create's transaction, beside the plain create for comparison:
//
//	go test -tags nomsgpack,grpcnotrace -run '^$' -bench CreateIdempotent -benchmem ./adapters/bunstore/
func BenchmarkCreateIdempotent(b *testing.B) {
	q := domain.Quota{MaxEntries: 1 << 40, MaxBytes: 1 << 50}
	for _, be := range benchBackends(b) {
		repo := NewCacheRepository(be.open(b), "bench_cache")
		ctx := context.Background()
		var seq atomic.Int64
		plain := func() error { return repo.Create(ctx, testEntry(int(seq.Add(1))), testNow, q) }
		keyed := func() error {
			e := testEntry(int(seq.Add(1)))
			rec := ports.IdempotencyRecord{Scope: "user/user:bench", Key: fmt.Sprint("k", e.ID), RequestHash: "h",
				Entry: e, ExpiresAt: testNow.Add(24 * time.Hour)}
			return repo.CreateIdempotent(ctx, e, testNow, q, rec)
		}
		for _, c := range []struct {
			name   string
			create func() error
		}{{"plain", plain}, {"keyed", keyed}} {
			b.Run(be.name+"/serial/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := c.create(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(be.name+"/parallel/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := c.create(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
