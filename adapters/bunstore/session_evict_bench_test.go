package bunstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// BenchmarkLoginAtTheSessionCap is the store's share of a login of a
// user at --max-sessions-per-user (100): the new family saved, then the
// least recently used evicted (EvictSessions), against the save alone
// ("uncapped"), which a user below the cap also pays.
func BenchmarkLoginAtTheSessionCap(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, capped := range []bool{false, true} {
			name := be.name + "/uncapped"
			if capped {
				name = be.name + "/capped"
			}
			b.Run(name, func(b *testing.B) {
				s := NewRefreshStore(be.open(b))
				ctx := context.Background()
				now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
				const keep = 100
				n := 0
				login := func() {
					n++
					rec := domain.RefreshRecord{ID: fmt.Sprintf("t-%d", n), FamilyID: fmt.Sprintf("f-%09d", n), UserID: "u1",
						IssuedAt: now.Add(time.Duration(n) * time.Microsecond), ExpiresAt: now.Add(time.Hour)}
					if err := s.SaveRefresh(ctx, rec); err != nil {
						b.Fatal(err)
					}
					if capped {
						if _, err := s.EvictSessions(ctx, "u1", keep, now); err != nil {
							b.Fatal(err)
						}
					}
				}
				for range keep {
					login()
				}
				b.ResetTimer()
				for b.Loop() {
					login()
				}
			})
		}
	}
}
