package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Logout revokes the refresh family of the caller's session.
type Logout struct {
	refresh ports.RefreshStore
	clock   ports.Clock
}

// NewLogout returns the use case.
func NewLogout(refresh ports.RefreshStore, clock ports.Clock) (*Logout, error) {
	if refresh == nil || clock == nil {
		return nil, errors.New("logout needs a refresh store and a clock")
	}
	return &Logout{refresh: refresh, clock: clock}, nil
}

// Execute revokes p's family; a principal without one (an integrator's
// token) has nothing to revoke. The access token itself stays valid until
// it expires.
func (uc *Logout) Execute(ctx context.Context, actor domain.Actor) error {
	if !actor.Authenticated() {
		return domain.ErrUnauthenticated
	}
	if actor.Principal.FamilyID == "" {
		return nil
	}
	if err := uc.refresh.RevokeFamily(ctx, actor.Principal.FamilyID, uc.clock.Now()); err != nil {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}
