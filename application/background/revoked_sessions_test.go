package background_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
)

func TestRevokedSessionsForgetWhatNoTokenNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	refresh, clock := memstore.NewRefreshStore(nil), newClock()
	revoked, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: refresh, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := refresh.SaveRefresh(ctx, domain.RefreshRecord{ID: fmt.Sprint("t", i), FamilyID: fmt.Sprint("f", i),
			UserID: "u", IssuedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := refresh.RevokeFamily(ctx, fmt.Sprint("f", i), clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := revoked.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if !revoked.Revoked(ctx, "f1") || revoked.Revoked(ctx, "f9") || revoked.Len() != 3 {
		t.Fatalf("after a poll: f1 %v, f9 %v, %d held; want true, false, 3", revoked.Revoked(ctx, "f1"),
			revoked.Revoked(ctx, "f9"), revoked.Len())
	}
	// Access lifetime, leeway and overlap later, no token of them is valid.
	clock.Advance(application.DefaultAccessTTL + background.DefaultRevocationOverlap + time.Minute)
	if err := revoked.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if revoked.Len() != 0 {
		t.Fatalf("%d families still held after every token of theirs expired", revoked.Len())
	}
}
