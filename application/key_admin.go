package application

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SigningKeys is what key administration needs of the token adapter
// (josejwt.Tokens provides it).
//
// The events given to Rotate and Revoke record the change: they are
// written in the key store's transaction of the change (see
// ports.AuditLog), Rotate's with their Family set to the new kid.
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

// KeyAdmin administers the token signing keys (the `cachegate keys`
// commands).
type KeyAdmin struct {
	keys  SigningKeys
	clock ports.Clock
	log   *slog.Logger
	audit *Auditor
}

// SetAuditor makes a record key.rotated and key.revoked events; call it
// before use.
func (a *KeyAdmin) SetAuditor(x *Auditor) { a.audit = x }

// NewKeyAdmin returns the use cases; log may be nil.
func NewKeyAdmin(keys SigningKeys, clock ports.Clock, log *slog.Logger) (*KeyAdmin, error) {
	if keys == nil || clock == nil {
		return nil, errors.New("key administration needs the signing keys and a clock")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &KeyAdmin{keys: keys, clock: clock, log: log}, nil
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
func (a *KeyAdmin) List(ctx context.Context) ([]KeyStatus, error) {
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

// RotateKeyInput is the input of KeyAdmin.Rotate.
type RotateKeyInput struct {
	// Now makes the new key sign at once (`keys rotate --now`, for
	// emergencies): clients that cached the JWKS refuse its tokens until
	// they fetch it again. Otherwise it is published first and signs
	// after the publish-ahead time (README.md, "Tokens").
	Now bool
}

// Rotate adds a new signing key and returns it (SignsFrom tells when it
// signs); the previous key signs until then, then verifies access tokens
// for the access lifetime and refresh tokens for the refresh lifetime.
// The key.rotated event is written with the new key, in its transaction,
// where the key store writes events.
func (a *KeyAdmin) Rotate(ctx context.Context, in RotateKeyInput) (domain.SigningKey, error) {
	event, events := a.audit.Prepare(ctx, domain.AuditEvent{Type: domain.AuditKeyRotated})
	k, err := a.keys.Rotate(ctx, in.Now, events...)
	if err != nil {
		return domain.SigningKey{}, err
	}
	event.Family = k.ID // the key events' Family holds the key id
	a.log.InfoContext(ctx, "signing key rotated", "kid", k.ID, "signsFrom", k.SignsFrom)
	a.audit.Committed(ctx, event)
	return k, nil
}

// Revoke revokes the key kid: tokens it signed stop working everywhere
// within a second (sessions whose refresh token it signed end). It returns
// domain.ErrSigningKeyNotFound for an unknown kid. The key.revoked event
// is written with the revocation, in its transaction, where the key store
// writes events.
func (a *KeyAdmin) Revoke(ctx context.Context, kid string) error {
	event, events := a.audit.Prepare(ctx, domain.AuditEvent{Type: domain.AuditKeyRevoked, Family: kid})
	if err := a.keys.Revoke(ctx, kid, events...); err != nil {
		return err
	}
	a.log.WarnContext(ctx, "signing key revoked", "kid", kid)
	a.audit.Committed(ctx, event)
	return nil
}
