package application

import (
	"context"
	"errors"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Logout revokes the refresh family of the caller's session.
type Logout struct {
	refresh ports.RefreshStore
	clock   ports.Clock
	revoked SessionRevocations
	audit   *AuditTrail
}

// NewLogout returns the use case, which records a "logout" event for
// every logout in audit; revoked may be nil (then this process learns of
// the logout at its next poll, like every other), and so may audit.
func NewLogout(refresh ports.RefreshStore, clock ports.Clock, revoked SessionRevocations, audit *AuditTrail) (*Logout, error) {
	if refresh == nil || clock == nil {
		return nil, errors.New("logout needs a refresh store and a clock")
	}
	return &Logout{refresh: refresh, clock: clock, revoked: revoked, audit: audit}, nil
}

// Execute revokes p's family; a principal without one (an integrator's
// token) has nothing to revoke.
func (uc *Logout) Execute(ctx context.Context, actor domain.Actor) error {
	if !actor.Authenticated() {
		return domain.ErrUnauthenticated
	}
	family := actor.Principal.FamilyID
	if family == "" {
		return nil
	}
	p := actor.Principal
	return revokeSession(ctx, uc.audit, uc.refresh.For(actor.Caller()), uc.revoked, uc.clock, "logout", family,
		fromClient(actor, domain.AuditEvent{Type: domain.AuditLogout, UserID: p.ID, Username: p.Username, Family: family}))
}
