package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Default token lifetimes (README, "Configuration").
const (
	DefaultAccessTTL  = 15 * time.Minute
	DefaultRefreshTTL = 30 * domain.Day
	// DefaultSessionMax bounds a refresh family's life from its login
	// (docs/api.md, "Authentication"; auth.sessionMax).
	DefaultSessionMax = 90 * domain.Day
)

// TokenDeps are what login and refresh need to mint a token pair.
type TokenDeps struct {
	Issuer     ports.TokenIssuer
	Refresh    ports.RefreshStore
	Clock      ports.Clock
	IDs        ports.IDGenerator
	AccessTTL  time.Duration
	RefreshTTL time.Duration
	// SessionMax bounds a family's life from its login, however often it
	// refreshes: no token of the family expires later than the login
	// instant plus SessionMax. Zero means DefaultSessionMax.
	SessionMax time.Duration
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
	if d.SessionMax == 0 {
		d.SessionMax = DefaultSessionMax
	}
	if d.AccessTTL < 0 || d.RefreshTTL < 0 || d.SessionMax < 0 {
		return errors.New("token lifetimes must be positive")
	}
	return nil
}

// errSessionOver tells prepare that the family's session maximum has
// passed.
var errSessionOver = errors.New("the session reached its maximum lifetime")

// issue is a pair being issued. Its refresh token is signed at once: the
// store keeps the digest of its exact string (domain.RefreshRecord.Digest,
// what lets a refresh skip the signature check), which only the signed
// string has. Its access token is signed by pair, once the store has
// decided.
type issue struct {
	access  domain.Claims
	refresh string
	rec     domain.RefreshRecord
}

// prepare returns the pair for userID in familyID, whose login happened
// at start, for client (whose address and user agent the session
// records), with the refresh token's record for the caller to store. Both
// tokens expire at the latest at start plus SessionMax; when less than a
// second of the session is left it returns errSessionOver (token times
// are whole seconds).
func (d TokenDeps) prepare(ctx context.Context, userID, familyID string, start time.Time, admin bool, client domain.Client) (issue, error) {
	now := domain.Normalize(d.Clock.Now())
	end := start.Add(d.SessionMax)
	if end.Unix() <= now.Unix() {
		return issue{}, errSessionOver
	}
	capped := func(ttl time.Duration) time.Time {
		if exp := now.Add(ttl); exp.Before(end) {
			return exp
		}
		return end
	}
	access := domain.Claims{Kind: domain.AccessToken, Subject: userID, ID: d.IDs.NewID(),
		FamilyID: familyID, IssuedAt: now, ExpiresAt: capped(d.AccessTTL), SessionStart: start, Admin: admin}
	refresh := domain.Claims{Kind: domain.RefreshToken, Subject: userID, ID: d.IDs.NewID(),
		FamilyID: familyID, IssuedAt: now, ExpiresAt: capped(d.RefreshTTL), SessionStart: start}
	rt, err := d.Issuer.RefreshToken(ctx, refresh)
	if err != nil {
		return issue{}, fmt.Errorf("sign refresh token: %w", err)
	}
	rec := domain.RefreshRecord{ID: refresh.ID, Digest: domain.TokenDigest(rt), FamilyID: familyID, UserID: userID,
		IssuedAt: now, ExpiresAt: refresh.ExpiresAt, Address: client.Address, UserAgent: domain.CutUserAgent(client.UserAgent)}
	return issue{access: access, refresh: rt, rec: rec}, nil
}

// pair signs i's access token and returns it with refreshToken: i's own,
// or the family's live token issued again.
func (d TokenDeps) pair(ctx context.Context, i issue, refreshToken string) (domain.TokenPair, error) {
	at, err := d.Issuer.AccessToken(ctx, i.access)
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("sign access token: %w", err)
	}
	return domain.TokenPair{AccessToken: at, RefreshToken: refreshToken}, nil
}
