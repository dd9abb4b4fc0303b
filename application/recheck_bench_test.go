package application_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
)

// BenchmarkRecheckWakesTenThousandStreams measures what one revocation
// costs the process while 10 000 streams are open: the bump wakes every
// stream's goroutine, each re-checks its principal (Authenticate.Recheck,
// in memory: 10 000 revoked families in the set) and waits again. One
// op is one bump until every stream has re-checked.
//
//	go test -tags nomsgpack,grpcnotrace -run '^$' -bench RecheckWakes -benchtime 40x -count 3 ./application/
func BenchmarkRecheckWakesTenThousandStreams(b *testing.B) {
	const streams = 10000
	ctx := context.Background()
	clock := newClock()
	changes := application.NewAuthChanges()
	revoked, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: memstore.NewRefreshStore(nil),
		Clock: clock, Changes: changes})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10000 {
		revoked.Add("revoked-family-" + strconv.Itoa(i))
	}
	revoked.Revoked(ctx, "warm-up") // the first call polls the (empty) store
	// The adds above bumped; let their last signal pass.
	time.Sleep(2 * application.AuthChangesGap)
	auth, err := application.NewAuthenticate(noVerifier{}, nil, application.RepoUserLookup{Users: memstore.NewUserRepository(nil, nil)}, revoked, changes)
	if err != nil {
		b.Fatal(err)
	}
	now := clock.Now()
	var rechecked sync.WaitGroup
	stop := make(chan struct{})
	var done, started sync.WaitGroup
	started.Add(streams)
	for i := range streams {
		p := domain.Principal{ID: "user-" + strconv.Itoa(i), FamilyID: "live-family-" + strconv.Itoa(i),
			ExpiresAt: now.Add(time.Hour), KeyID: "k"}
		done.Add(1)
		go func() {
			defer done.Done()
			ch := auth.Changed()
			started.Done()
			for {
				select {
				case <-stop:
					return
				case <-ch:
				}
				ch = auth.Changed()
				if err := auth.Recheck(ctx, p, now); err != nil {
					b.Error(err)
				}
				rechecked.Done()
			}
		}()
	}
	started.Wait()
	b.ResetTimer()
	for range b.N {
		// Bumps are at least AuthChangesGap apart; the wait is not
		// measured.
		b.StopTimer()
		time.Sleep(application.AuthChangesGap)
		rechecked.Add(streams)
		b.StartTimer()
		changes.Bump()
		rechecked.Wait()
	}
	b.StopTimer()
	close(stop)
	done.Wait()
}

type noVerifier struct{}

func (noVerifier) AccessToken(context.Context, string) (domain.Claims, error) {
	return domain.Claims{}, domain.ErrUnauthenticated
}

func (noVerifier) RefreshToken(context.Context, string) (domain.Claims, error) {
	return domain.Claims{}, domain.ErrUnauthenticated
}
