package application

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AdminCheckTTL is how long AdminCheck trusts what it read of a user's
// admin flag: a revoked admin loses the admin API within it on every
// replica (docs/admin.md).
const AdminCheckTTL = time.Second

// AdminCheck decides whether a caller may use the admin API: an active
// user whose stored admin flag is set (the store's, not the token's), as
// read at most AdminCheckTTL ago.
type AdminCheck struct {
	users ports.UserRepository
	clock ports.Clock
	mu    sync.Mutex
	seen  map[string]adminSeen
}

type adminSeen struct {
	admin bool
	at    time.Time
}

// NewAdminCheck returns the check.
func NewAdminCheck(users ports.UserRepository, clock ports.Clock) (*AdminCheck, error) {
	if users == nil || clock == nil {
		return nil, errors.New("the admin check needs the user store and a clock")
	}
	return &AdminCheck{users: users, clock: clock, seen: map[string]adminSeen{}}, nil
}

// Require returns nil when actor is an admin now: domain.ErrUnauthenticated
// for an anonymous actor, domain.ErrForbidden for a user who is not an
// active admin (or no longer exists).
func (a *AdminCheck) Require(ctx context.Context, actor domain.Actor) error {
	if !actor.Authenticated() {
		return domain.ErrUnauthenticated
	}
	ok, err := a.IsAdmin(ctx, actor.Principal.ID)
	if err != nil {
		return err
	}
	if !ok {
		return domain.ErrForbidden
	}
	return nil
}

// IsAdmin reports whether the user id is an active admin, as the store
// said at most AdminCheckTTL ago.
func (a *AdminCheck) IsAdmin(ctx context.Context, id string) (bool, error) {
	now := a.clock.Now()
	a.mu.Lock()
	s, ok := a.seen[id]
	a.mu.Unlock()
	if ok && now.Sub(s.at) < AdminCheckTTL && !now.Before(s.at) {
		return s.admin, nil
	}
	u, err := a.users.UserByID(ctx, id)
	admin := err == nil && u.Active && u.Admin
	if err != nil && !errors.Is(err, domain.ErrUserNotFound) {
		return false, fmt.Errorf("admin check: %w", err)
	}
	a.mu.Lock()
	if len(a.seen) > 10000 {
		clear(a.seen) // bounded: a cache, not a registry
	}
	a.seen[id] = adminSeen{admin: admin, at: now}
	a.mu.Unlock()
	return admin, nil
}

// Forget drops what the check remembers of id, so this process sees an
// admin change it made itself at once.
func (a *AdminCheck) Forget(id string) {
	a.mu.Lock()
	delete(a.seen, id)
	a.mu.Unlock()
}

// byAdmin returns e as done by actor (none for the system actor), from
// its client's address.
func byAdmin(actor domain.Actor, e domain.AuditEvent) domain.AuditEvent {
	e.ActorID, e.ActorUsername = actor.Principal.ID, domain.CutAuditUsername(actor.Principal.Username)
	return fromClient(actor, e)
}

// fromClient returns e with the address of actor's client.
func fromClient(actor domain.Actor, e domain.AuditEvent) domain.AuditEvent {
	e.Address = cmp.Or(e.Address, actor.Client.Address)
	return e
}
