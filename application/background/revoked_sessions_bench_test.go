package background_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application/background"
)

// BenchmarkRevokedSessionsCheck measures what the guard adds per request
// for sessions that end everywhere: the lookup of a live token's family in
// a set of 10 000 revoked ones.
func BenchmarkRevokedSessionsCheck(b *testing.B) {
	r, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: memstore.NewRefreshStore(nil), Clock: newClock()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range 10000 {
		r.Add("revoked-family-" + strconv.Itoa(i))
	}
	r.Revoked(ctx, "warm-up") // the first call polls the (empty) store
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r.Revoked(ctx, "01a2164f-be97-721f-99a0-e838d962c35e") {
				b.Fatal("a live family reads as revoked")
			}
		}
	})
}
