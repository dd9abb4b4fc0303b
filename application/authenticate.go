package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Authenticate turns a bearer access token into the principal it names.
type Authenticate struct {
	verifier  ports.TokenVerifier
	validator ports.TokenValidator
	lookup    ports.UserLookup
	revoked   *RevokedSessions
}

// NewAuthenticate returns the use case; validator may be nil (extra
// validation then passes), and so may revoked (then an access token stays
// valid until it expires, whatever happens to its session).
func NewAuthenticate(verifier ports.TokenVerifier, validator ports.TokenValidator, lookup ports.UserLookup, revoked *RevokedSessions) (*Authenticate, error) {
	if verifier == nil || lookup == nil {
		return nil, errors.New("authenticate needs a token verifier and a user lookup")
	}
	return &Authenticate{verifier: verifier, validator: validator, lookup: lookup, revoked: revoked}, nil
}

// Execute returns the principal of a valid access token, with its refresh
// family. It returns domain.ErrUnauthenticated for an invalid token or a
// subject that names no active user, and
// domain.ErrAccessTokenFailedValidation when the extra validation refuses
// a verified token. A token of a revoked family (its sid) is
// domain.ErrUnauthenticated too.
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
	p.FamilyID, p.ExpiresAt = c.FamilyID, c.ExpiresAt
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
