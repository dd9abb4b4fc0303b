package application

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cachegate/cachegate/domain"
)

// SigningKeys is what key administration needs of the token adapter
// (josejwt.Tokens provides it).
//
// The events given to Rotate and Revoke record the change: they are
// written in the key store's transaction of the change (see
// ports.AuditLog), Rotate's with their Family set to the new kid.
type SigningKeys interface {
	// Rotate makes a new key current and returns its kid.
	Rotate(ctx context.Context, events ...domain.AuditEvent) (string, error)
	// Revoke stops every process accepting tokens of kid, making a new key
	// current first when kid is current; domain.ErrSigningKeyNotFound for
	// an unknown kid.
	Revoke(ctx context.Context, kid string, events ...domain.AuditEvent) error
	// List returns every stored key, newest first, without private halves.
	List(ctx context.Context) ([]domain.SigningKey, error)
}

// KeyAdmin administers the token signing keys (the `cachegate keys`
// commands).
type KeyAdmin struct {
	keys  SigningKeys
	log   *slog.Logger
	audit *Auditor
}

// SetAuditor makes a record key.rotated and key.revoked events; call it
// before use.
func (a *KeyAdmin) SetAuditor(x *Auditor) { a.audit = x }

// NewKeyAdmin returns the use cases; log may be nil.
func NewKeyAdmin(keys SigningKeys, log *slog.Logger) (*KeyAdmin, error) {
	if keys == nil {
		return nil, errors.New("key administration needs the signing keys")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &KeyAdmin{keys: keys, log: log}, nil
}

// List returns every stored key, newest first, without private halves;
// domain.SigningKey.State tells current, retired and revoked apart.
func (a *KeyAdmin) List(ctx context.Context) ([]domain.SigningKey, error) {
	keys, err := a.keys.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	return keys, nil
}

// Rotate makes a new key current and returns its kid; the previous key
// verifies access tokens for the access lifetime and refresh tokens for
// the refresh lifetime. The key.rotated event is written with the new key,
// in its transaction, where the key store writes events.
func (a *KeyAdmin) Rotate(ctx context.Context) (string, error) {
	event, events := a.audit.Prepare(ctx, domain.AuditEvent{Type: domain.AuditKeyRotated})
	kid, err := a.keys.Rotate(ctx, events...)
	if err != nil {
		return "", err
	}
	event.Family = kid // the key events' Family holds the key id
	a.log.InfoContext(ctx, "signing key rotated", "kid", kid)
	a.audit.Committed(ctx, event)
	return kid, nil
}

// Revoke revokes the key kid: tokens it signed stop working everywhere
// within a minute (sessions whose refresh token it signed end). It returns
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
