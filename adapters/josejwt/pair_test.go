package josejwt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// TestPairIsAccessTokenAndRefreshToken: Issuer.Pair writes, in one call,
// the very tokens AccessToken and RefreshToken write for the same claims
// (both algorithms sign deterministically), and each verifies as its
// kind only; claims either method refuses, Pair refuses.
func TestPairIsAccessTokenAndRefreshToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, e := range bothModes(t, nil) {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			for i, admin := range []bool{false, true} {
				access := e.claims(domain.AccessToken, time.Minute)
				access.Admin, access.ID = admin, fmt.Sprint("access-", i)
				refresh := e.claims(domain.RefreshToken, time.Hour)
				refresh.SessionStart = e.clock.Now().Add(-time.Hour)
				pair, err := e.tok.Issuer().Pair(ctx, access, refresh)
				if err != nil {
					t.Fatal(err)
				}
				if want := e.issue(t, access); pair.AccessToken != want {
					t.Errorf("Pair's access token differs from AccessToken's:\n%s\n%s", pair.AccessToken, want)
				}
				if want := e.issue(t, refresh); pair.RefreshToken != want {
					t.Errorf("Pair's refresh token differs from RefreshToken's:\n%s\n%s", pair.RefreshToken, want)
				}
				if c, err := e.verify(domain.AccessToken, pair.AccessToken); err != nil || c.ID != access.ID {
					t.Errorf("the access token verifies as %+v, %v", c, err)
				}
				if c, err := e.verify(domain.RefreshToken, pair.RefreshToken); err != nil || c.ID != refresh.ID {
					t.Errorf("the refresh token verifies as %+v, %v", c, err)
				}
				if _, err := e.verify(domain.RefreshToken, pair.AccessToken); err == nil {
					t.Error("the access token verifies as a refresh token")
				}
			}
			bad := e.claims(domain.RefreshToken, time.Hour)
			bad.Subject = ""
			if _, err := e.tok.Issuer().Pair(ctx, e.claims(domain.AccessToken, time.Minute), bad); err == nil {
				t.Error("Pair signed a refresh token with no subject")
			}
			if _, err := e.tok.Issuer().Pair(ctx, e.claims(domain.RefreshToken, time.Minute), e.claims(domain.RefreshToken, time.Hour)); err == nil {
				t.Error("Pair signed refresh claims as an access token")
			}
		})
	}
}
