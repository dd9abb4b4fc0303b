package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Authenticate turns a bearer access token into the principal it names.
type Authenticate struct {
	verifier  ports.TokenVerifier
	validator ports.TokenValidator
	lookup    ports.UserLookup
	revoked   SessionRevocations
	keys      ports.KeyRevocations // nil when the verifier cannot tell
	changes   *AuthChanges
}

// NewAuthenticate returns the use case; validator may be nil (extra
// validation then passes), and so may revoked (then an access token stays
// valid until it expires, whatever happens to its session) and changes
// (then Changed reports nothing).
func NewAuthenticate(verifier ports.TokenVerifier, validator ports.TokenValidator, lookup ports.UserLookup, revoked SessionRevocations, changes *AuthChanges) (*Authenticate, error) {
	if verifier == nil || lookup == nil {
		return nil, errors.New("authenticate needs a token verifier and a user lookup")
	}
	keys, _ := verifier.(ports.KeyRevocations)
	return &Authenticate{verifier: verifier, validator: validator, lookup: lookup, revoked: revoked, keys: keys, changes: changes}, nil
}

// Changed returns a channel closed at the next change that may end a
// principal's authorisation in this process (a session or a signing key
// revoked), or nil when nothing reports changes. A holder of a principal
// takes the channel, then calls Recheck, then waits on it.
func (uc *Authenticate) Changed() <-chan struct{} { return uc.changes.Changed() }

// Recheck re-authorises, at now, a principal that Execute returned
// earlier, for a caller that holds it for long (an event stream). It
// returns domain.ErrUnauthenticated when a request with the same token
// would now be refused for a reason this process knows in memory:
//
//   - the token expired (at its exp: a stream gets no leeway);
//   - its session (refresh family) was revoked (SessionRevocations);
//   - its signing key was revoked (when the verifier is a
//     ports.KeyRevocations).
//
// It queries no store and verifies no signature. What only a store could
// tell and an integrator's extra validation are checked when the stream
// opens, as for a request.
func (uc *Authenticate) Recheck(ctx context.Context, p domain.Principal, now time.Time) error {
	switch {
	case !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt):
		return fmt.Errorf("recheck: token expired: %w", domain.ErrUnauthenticated)
	case uc.revoked != nil && uc.revoked.Revoked(ctx, p.FamilyID):
		return fmt.Errorf("recheck: session revoked: %w", domain.ErrUnauthenticated)
	case uc.keys != nil && p.KeyID != "" && uc.keys.KeyRevoked(p.KeyID):
		return fmt.Errorf("recheck: signing key revoked: %w", domain.ErrUnauthenticated)
	}
	return nil
}

// Execute returns the principal of a valid access token, with its refresh
// family. It returns domain.ErrUnauthenticated for an invalid token, a
// revoked family or a subject that names no active user, and
// domain.ErrAccessTokenFailedValidation when the extra validation refuses
// a verified token.
func (uc *Authenticate) Execute(ctx context.Context, token string) (domain.Principal, error) {
	c, err := uc.verifier.AccessToken(ctx, token)
	if err != nil {
		return domain.Principal{}, unauthenticated(err)
	}
	if uc.revoked != nil && uc.revoked.Revoked(ctx, c.FamilyID) {
		return domain.Principal{}, domain.ErrUnauthenticated
	}
	if err := extraValidation(ctx, uc.validator, c, domain.ErrAccessTokenFailedValidation); err != nil {
		return domain.Principal{}, err
	}
	p, err := uc.lookup.BySubject(ctx, c.Subject)
	if errors.Is(err, domain.ErrUserNotFound) {
		return domain.Principal{}, domain.ErrUnauthenticated
	}
	if err != nil {
		return domain.Principal{}, fmt.Errorf("authenticate: look up subject: %w", err)
	}
	p.FamilyID, p.ExpiresAt, p.KeyID = c.FamilyID, c.ExpiresAt, c.KeyID
	return p, nil
}

// unauthenticated turns a verifier's failure into
// domain.ErrUnauthenticated, unless it is a domain error of another kind
// (an integrator's verifier may answer, say, a validation error).
func unauthenticated(err error) error {
	var de *domain.Error
	if errors.As(err, &de) && de.Kind != domain.KindUnauthenticated {
		return err
	}
	return domain.ErrUnauthenticated
}

func extraValidation(ctx context.Context, v ports.TokenValidator, c domain.Claims, failed error) error {
	if v == nil {
		return nil
	}
	ok, err := v.ValidateToken(ctx, c)
	if err != nil {
		return fmt.Errorf("validate token: %w", err)
	}
	if !ok {
		return failed
	}
	return nil
}
