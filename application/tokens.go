package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Default token lifetimes (CONTRACT.md section 4).
const (
	DefaultAccessTTL  = 15 * time.Minute
	DefaultRefreshTTL = 30 * domain.Day
)

// TokenDeps are what login and refresh need to mint a token pair.
type TokenDeps struct {
	Issuer     ports.TokenIssuer
	Refresh    ports.RefreshStore
	Clock      ports.Clock
	IDs        ports.IDGenerator
	AccessTTL  time.Duration
	RefreshTTL time.Duration
}

func (d *TokenDeps) validate() error {
	if d.Issuer == nil || d.Refresh == nil || d.Clock == nil || d.IDs == nil {
		return errors.New("token minting needs an issuer, a refresh store, a clock and ids")
	}
	if d.AccessTTL == 0 {
		d.AccessTTL = DefaultAccessTTL
	}
	if d.RefreshTTL == 0 {
		d.RefreshTTL = DefaultRefreshTTL
	}
	if d.AccessTTL < 0 || d.RefreshTTL < 0 {
		return errors.New("token lifetimes must be positive")
	}
	return nil
}

// mint signs a pair for userID in familyID and returns the refresh
// token's record for the caller to store.
func (d TokenDeps) mint(ctx context.Context, userID, familyID string) (domain.TokenPair, domain.RefreshRecord, error) {
	now := domain.Normalize(d.Clock.Now())
	access := domain.Claims{Kind: domain.AccessToken, Subject: userID, ID: d.IDs.NewID(),
		FamilyID: familyID, IssuedAt: now, ExpiresAt: now.Add(d.AccessTTL)}
	refresh := domain.Claims{Kind: domain.RefreshToken, Subject: userID, ID: d.IDs.NewID(),
		FamilyID: familyID, IssuedAt: now, ExpiresAt: now.Add(d.RefreshTTL)}
	at, err := d.Issuer.AccessToken(ctx, access)
	if err != nil {
		return domain.TokenPair{}, domain.RefreshRecord{}, fmt.Errorf("sign access token: %w", err)
	}
	rt, err := d.Issuer.RefreshToken(ctx, refresh)
	if err != nil {
		return domain.TokenPair{}, domain.RefreshRecord{}, fmt.Errorf("sign refresh token: %w", err)
	}
	rec := domain.RefreshRecord{ID: refresh.ID, FamilyID: familyID, UserID: userID,
		IssuedAt: now, ExpiresAt: refresh.ExpiresAt}
	return domain.TokenPair{AccessToken: at, RefreshToken: rt}, rec, nil
}
