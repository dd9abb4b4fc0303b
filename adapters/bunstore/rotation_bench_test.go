package bunstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// BenchmarkRotateRefresh rotates the tokens of 64 families from parallel
// goroutines (on SQLite through the rotation group, internal/batch), each
// rotation presenting its family's live token, as refreshes under load
// do. It measures the store's share of POST /auth/refresh.
func BenchmarkRotateRefresh(b *testing.B) {
	for _, be := range benchBackends(b) {
		b.Run(be.name, func(b *testing.B) {
			s := NewRefreshStore(be.open(b))
			ctx := context.Background()
			now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			const families = 64
			live := make([]atomic.Pointer[domain.RefreshRecord], families)
			for f := range families {
				rec := domain.RefreshRecord{ID: fmt.Sprintf("t-%d-0", f), FamilyID: fmt.Sprintf("f-%d", f), UserID: "u1",
					IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
				if err := s.SaveRefresh(ctx, rec); err != nil {
					b.Fatal(err)
				}
				live[f].Store(&rec)
			}
			var next, seq, failed atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				f := int(next.Add(1)-1) % families
				for pb.Next() {
					cur := live[f].Load()
					succ := domain.RefreshRecord{ID: fmt.Sprintf("t-%d-%d", f, seq.Add(1)), FamilyID: cur.FamilyID,
						UserID: cur.UserID, IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
					presented := domain.Claims{Kind: domain.RefreshToken, ID: cur.ID, FamilyID: cur.FamilyID,
						Subject: cur.UserID, IssuedAt: cur.IssuedAt, ExpiresAt: cur.ExpiresAt}
					rot, err := s.RotateRefresh(ctx, presented, succ, now, time.Minute)
					if err != nil || (rot.Outcome != domain.RefreshRotate && rot.Outcome != domain.RefreshReissue) {
						// Another goroutine of the same family rotated
						// first: take its token and go on.
						failed.Add(1)
						continue
					}
					live[f].Store(&rot.Record)
				}
			})
			b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/op")
		})
	}
}
