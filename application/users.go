package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Users administers local users and their sessions: the `cachegate
// users` commands (the system actor) and the admin API's /admin/users
// (an admin; docs/admin.md). Every change is recorded as one event per
// fact, of the fact's own type, naming the acting admin. Disabling a user
// and setting a password end the user's sessions in the transaction of
// the change and its event (ports.UserRepository.UpdateUserEndingSessions).
type Users struct {
	users    ports.UserRepository
	hasher   ports.PasswordHasher
	clock    ports.Clock
	ids      ports.IDGenerator
	audit    *AuditTrail
	check    *AdminCheck
	refresh  ports.RefreshStore
	revoked  SessionRevocations
	dir      ports.UserDirectory // nil: the user store cannot list or delete
	sessions ports.SessionStore  // nil: the refresh store cannot show sessions
}

// UsersDeps are what Users needs. Audit may be nil (nothing is then
// recorded), and so may Revoked. Check is told of changes so this process
// applies them at once.
type UsersDeps struct {
	Users   ports.UserRepository
	Hasher  ports.PasswordHasher
	Clock   ports.Clock
	IDs     ports.IDGenerator
	Audit   *AuditTrail
	Check   *AdminCheck
	Refresh ports.RefreshStore
	Revoked SessionRevocations
}

// NewUsers returns the use cases.
func NewUsers(d UsersDeps) (*Users, error) {
	if d.Users == nil || d.Hasher == nil || d.Clock == nil || d.IDs == nil || d.Check == nil || d.Refresh == nil {
		return nil, errors.New("user administration needs users, a hasher, a clock, ids, the admin check and the refresh store")
	}
	dir, _ := d.Users.(ports.UserDirectory)
	sessions, _ := d.Refresh.(ports.SessionStore)
	return &Users{users: d.Users, hasher: d.Hasher, clock: d.Clock, ids: d.IDs, audit: d.Audit, check: d.Check,
		refresh: d.Refresh, revoked: d.Revoked, dir: dir, sessions: sessions}, nil
}

// All returns every user, ordered by username (`cachegate users list`);
// domain.ErrNotImplemented when the user store cannot list.
func (a *Users) All(ctx context.Context) ([]domain.User, error) {
	if a.dir == nil {
		return nil, domain.ErrNotImplemented
	}
	return a.dir.ListUsers(ctx)
}

// Get returns a user, or domain.ErrUserNotFound.
func (a *Users) Get(ctx context.Context, id string) (domain.User, error) {
	if !domain.IsUUID(id) {
		return domain.User{}, domain.ErrUserNotFound
	}
	return a.users.UserByID(ctx, id)
}

// ByUsername returns the user named username, or domain.ErrUserNotFound.
func (a *Users) ByUsername(ctx context.Context, username string) (domain.User, error) {
	return a.users.UserByUsername(ctx, username)
}

// AddUserInput describes a new user.
type AddUserInput struct {
	Username string
	Password string
	Active   bool
	Admin    bool
}

// Add creates a user and returns it, recording user.added and, for an
// admin, user.admin_granted. It returns domain.ErrUserExists when the
// username is taken (case-insensitively) and a validation error for a
// bad username or password.
func (a *Users) Add(ctx context.Context, actor domain.Actor, in AddUserInput) (domain.User, error) {
	if err := errors.Join(domain.ValidateUsername(in.Username), domain.ValidatePassword(in.Password)); err != nil {
		return domain.User{}, err
	}
	return a.add(ctx, actor, in, "", "add user")
}

// add stores the user in describes, checked already, as Add does, with
// detail on its events; what names the step in a store's error.
func (a *Users) add(ctx context.Context, actor domain.Actor, in AddUserInput, detail, what string) (domain.User, error) {
	hash, salt, err := a.hasher.Hash(ctx, in.Password)
	if err != nil {
		return domain.User{}, fmt.Errorf("hash password: %w", err)
	}
	now := domain.Normalize(a.clock.Now())
	u := domain.User{ID: a.ids.NewID(), Username: strings.TrimSpace(in.Username), PasswordHash: hash,
		PasswordSalt: salt, Active: in.Active, Admin: in.Admin, DateCreated: now, DateUpdated: now}
	types := []domain.AuditType{domain.AuditUserAdded}
	if u.Admin {
		types = append(types, domain.AuditUserAdminGranted)
	}
	filled, events := a.prepare(ctx, actor, u, detail, types...)
	if err := a.users.CreateUser(ctx, u, events...); err != nil {
		return domain.User{}, fmt.Errorf("%s: %w", what, err)
	}
	a.committed(ctx, filled)
	return u, nil
}

// UserPatch is what PATCH /admin/users/{id} changes; nil leaves a field.
type UserPatch struct {
	Active, Admin *bool
}

// Patch changes a user's active and admin flags, recording an event per
// flag given (user.enabled or user.disabled, user.admin_granted or
// user.admin_revoked). Disabling ends every session of the user in the
// same transaction. An admin cannot disable or demote themself
// (domain.ErrOwnAdminChange), nor the last active admin
// (domain.ErrLastAdmin).
func (a *Users) Patch(ctx context.Context, actor domain.Actor, id string, p UserPatch) (domain.User, error) {
	if (p.Active != nil && !*p.Active || p.Admin != nil && !*p.Admin) && id == actor.Principal.ID {
		return domain.User{}, domain.ErrOwnAdminChange
	}
	var types []domain.AuditType
	if p.Active != nil {
		types = append(types, flagEvent(*p.Active, domain.AuditUserEnabled, domain.AuditUserDisabled))
	}
	if p.Admin != nil {
		types = append(types, flagEvent(*p.Admin, domain.AuditUserAdminGranted, domain.AuditUserAdminRevoked))
	}
	u, err := a.Get(ctx, id)
	if err != nil {
		return domain.User{}, err
	}
	u, err = a.change(ctx, actor, u, p.Active != nil && !*p.Active, func(cur *domain.User) {
		if p.Active != nil {
			cur.Active = *p.Active
		}
		if p.Admin != nil {
			cur.Admin = *p.Admin
		}
	}, types...)
	if err != nil {
		return domain.User{}, err
	}
	a.check.Forget(id)
	return u, nil
}

// ResetPassword replaces a user's password and ends every session of the
// user in the same transaction (user.password_changed).
func (a *Users) ResetPassword(ctx context.Context, actor domain.Actor, id, password string) error {
	if err := domain.ValidatePassword(password); err != nil {
		return err
	}
	u, err := a.Get(ctx, id)
	if err != nil {
		return err
	}
	hash, salt, err := a.hasher.Hash(ctx, password)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	_, err = a.change(ctx, actor, u, true, func(u *domain.User) { u.PasswordHash, u.PasswordSalt = hash, salt },
		domain.AuditUserPasswordChanged)
	return err
}

// Delete removes a user and revokes every session of theirs
// (user.deleted); domain.ErrNotImplemented when the user store cannot
// delete. An admin cannot delete themself (domain.ErrOwnAdminChange), nor
// the last active admin (domain.ErrLastAdmin).
func (a *Users) Delete(ctx context.Context, actor domain.Actor, id string) error {
	if a.dir == nil {
		return domain.ErrNotImplemented
	}
	if id == actor.Principal.ID {
		return domain.ErrOwnAdminChange
	}
	u, err := a.Get(ctx, id)
	if err != nil {
		return err
	}
	filled, events := a.prepare(ctx, actor, u, "", domain.AuditUserDeleted)
	if err := a.dir.DeleteUser(ctx, id, a.clock.Now(), events...); err != nil {
		return err
	}
	a.check.Forget(id)
	a.committed(ctx, filled)
	return nil
}

// flagEvent is the type of the fact that a flag was set (on) or cleared.
func flagEvent(set bool, on, off domain.AuditType) domain.AuditType {
	if set {
		return on
	}
	return off
}

// change changes u for actor, recording one event per type (prepare);
// with endSessions the user's refresh families are revoked in the change's
// transaction too.
func (a *Users) change(ctx context.Context, actor domain.Actor, u domain.User, endSessions bool, change func(*domain.User), types ...domain.AuditType) (domain.User, error) {
	filled, events := a.prepare(ctx, actor, u, "", types...)
	fn := func(cur *domain.User) error {
		change(cur)
		cur.DateUpdated = domain.Normalize(a.clock.Now())
		return nil
	}
	var err error
	if endSessions {
		u, err = a.users.UpdateUserEndingSessions(ctx, u.ID, a.clock.Now(), fn, events...)
	} else {
		u, err = a.users.UpdateUser(ctx, u.ID, fn, events...)
	}
	if err != nil {
		return u, err
	}
	a.committed(ctx, filled)
	return u, nil
}

// prepare returns an event of each type about u, made by actor
// (no admin for the system actor), with detail, filled for a change about
// to be made, and those the store must write with it (AuditTrail.Prepare).
func (a *Users) prepare(ctx context.Context, actor domain.Actor, u domain.User, detail string, types ...domain.AuditType) (filled, stored []domain.AuditEvent) {
	for _, typ := range types {
		e, s := a.audit.Prepare(ctx, byAdmin(actor, domain.AuditEvent{Type: typ, UserID: u.ID, Username: u.Username, Detail: detail}))
		filled, stored = append(filled, e), append(stored, s...)
	}
	return filled, stored
}

// committed reports the events prepare filled once their change committed.
func (a *Users) committed(ctx context.Context, filled []domain.AuditEvent) {
	for _, e := range filled {
		a.audit.Committed(ctx, e)
	}
}
