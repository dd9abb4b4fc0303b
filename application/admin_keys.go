package application

import (
	"context"

	"github.com/cachegate/cachegate/domain"
)

// RotateBy is Rotate done by the admin p over the admin API: the event is
// key.rotated, naming p (docs/admin.md).
func (a *KeyAdmin) RotateBy(ctx context.Context, p domain.Principal, in RotateKeyInput) (domain.SigningKey, error) {
	event, events := a.audit.Prepare(ctx, byAdmin(p, domain.AuditEvent{Type: domain.AuditKeyRotated}))
	k, err := a.keys.Rotate(ctx, in.Now, events...)
	if err != nil {
		return domain.SigningKey{}, err
	}
	event.Family = k.ID
	a.log.InfoContext(ctx, "signing key rotated", "kid", k.ID, "signsFrom", k.SignsFrom, "by", p.ID)
	a.audit.Committed(ctx, event)
	return k, nil
}

// RevokeBy is Revoke done by the admin p over the admin API: the event is
// key.revoked, naming p.
func (a *KeyAdmin) RevokeBy(ctx context.Context, p domain.Principal, kid string) error {
	if !plausibleKid(kid) {
		return domain.ErrSigningKeyNotFound
	}
	event, events := a.audit.Prepare(ctx, byAdmin(p, domain.AuditEvent{Type: domain.AuditKeyRevoked, Family: kid}))
	if err := a.keys.Revoke(ctx, kid, events...); err != nil {
		return err
	}
	a.log.WarnContext(ctx, "signing key revoked", "kid", kid, "by", p.ID)
	a.audit.Committed(ctx, event)
	return nil
}

// plausibleKid reports whether kid could name a stored key: 1 to 128
// characters of [A-Za-z0-9._-]. Anything else (a NUL, which PostgreSQL
// text cannot hold) is unknown without asking the store.
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
