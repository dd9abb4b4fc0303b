package application

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SigningKeys is what key administration needs of the token adapter
// (josejwt.Tokens provides it). The events given to Rotate and Revoke are
// written in the key store's transaction of the change (ports.AuditLog),
// Rotate's with their Family set to the new kid.
type SigningKeys interface {
	// Rotate adds a new key, published at once and signing from the
	// configured publish-ahead time on (at once when immediate), and
	// returns it without its private half.
	Rotate(ctx context.Context, immediate bool, events ...domain.AuditEvent) (domain.SigningKey, error)
	// Revoke stops every process accepting tokens of kid, making a new key
	// sign at once first when kid signs (a key published ahead, not
	// signing yet, is only withdrawn: the signing key keeps signing);
	// domain.ErrSigningKeyNotFound for an unknown kid.
	Revoke(ctx context.Context, kid string, events ...domain.AuditEvent) error
	// List returns every stored key, newest first, without private halves.
	List(ctx context.Context) ([]domain.SigningKey, error)
}

// Keys administers the token signing keys: the `cachegate keys` commands
// (the system actor) and the admin API's /admin/keys (an admin).
type Keys struct {
	keys  SigningKeys
	clock ports.Clock
	log   *slog.Logger
	audit *AuditTrail
}

// NewKeys returns the use cases; log may be nil, and so may audit (then
// nothing is recorded).
func NewKeys(keys SigningKeys, clock ports.Clock, log *slog.Logger, audit *AuditTrail) (*Keys, error) {
	if keys == nil || clock == nil {
		return nil, errors.New("key administration needs the signing keys and a clock")
	}
	return &Keys{keys: keys, clock: clock, log: cmp.Or(log, slog.New(slog.DiscardHandler)), audit: audit}, nil
}

// KeyStatus is a stored key, without its private half, and its state at
// the time of the listing (domain.KeyPublished, KeySigning, KeyRetired or
// KeyRevoked).
type KeyStatus struct {
	domain.SigningKey
	State string
}

// List returns every stored key, newest first, without private halves,
// each with its state now.
func (a *Keys) List(ctx context.Context) ([]KeyStatus, error) {
	keys, err := a.keys.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	now := a.clock.Now()
	out := make([]KeyStatus, len(keys))
	for i, k := range keys {
		out[i] = KeyStatus{SigningKey: k, State: k.StateAt(now)}
	}
	return out, nil
}

// RotateKeyInput is the input of Keys.Rotate.
type RotateKeyInput struct {
	// Now makes the new key sign at once (`keys rotate --now`), before
	// clients that cached the JWKS fetch it again; otherwise it signs after
	// the publish-ahead time (README.md, "Tokens").
	Now bool
}

// Rotate adds a new signing key and returns it (SignsFrom tells when it
// signs); the previous key signs until then, then verifies access tokens
// for the access lifetime and refresh tokens for the refresh lifetime.
// The key.rotated event names the actor when it is an admin.
func (a *Keys) Rotate(ctx context.Context, actor domain.Actor, in RotateKeyInput) (domain.SigningKey, error) {
	event, events := a.audit.Prepare(ctx, byAdmin(actor, domain.AuditEvent{Type: domain.AuditKeyRotated}))
	k, err := a.keys.Rotate(ctx, in.Now, events...)
	if err != nil {
		return domain.SigningKey{}, err
	}
	event.Family = k.ID // the key events' Family holds the key id
	a.log.InfoContext(ctx, "signing key rotated", append([]any{"kid", k.ID, "signsFrom", k.SignsFrom}, by(actor)...)...)
	a.audit.Committed(ctx, event)
	return k, nil
}

// Revoke revokes the key kid: tokens it signed stop working everywhere
// within a second (sessions whose refresh token it signed end). It returns
// domain.ErrSigningKeyNotFound for an unknown kid. The key.revoked event
// names the actor when it is an admin.
func (a *Keys) Revoke(ctx context.Context, actor domain.Actor, kid string) error {
	if !plausibleKid(kid) {
		return domain.ErrSigningKeyNotFound
	}
	event, events := a.audit.Prepare(ctx, byAdmin(actor, domain.AuditEvent{Type: domain.AuditKeyRevoked, Family: kid}))
	if err := a.keys.Revoke(ctx, kid, events...); err != nil {
		return err
	}
	a.log.WarnContext(ctx, "signing key revoked", append([]any{"kid", kid}, by(actor)...)...)
	a.audit.Committed(ctx, event)
	return nil
}

// by is the log attribute naming an admin actor; none for the system.
func by(actor domain.Actor) []any {
	if !actor.Authenticated() {
		return nil
	}
	return []any{"by", actor.Principal.ID}
}

// plausibleKid reports whether kid could name a stored key: 1 to 128
// characters of [A-Za-z0-9._-] (no NUL, which PostgreSQL text cannot hold).
func plausibleKid(kid string) bool {
	if kid == "" || len(kid) > 128 {
		return false
	}
	for i := 0; i < len(kid); i++ {
		c := kid[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
