package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// UserAdmin administers local users (the `cachegate users` commands).
//
// Disabling a user and setting a password end the user's sessions: the
// user repository revokes every refresh family of the user in the
// transaction of the change and its audit event
// (ports.UserRepository.UpdateUserEndingSessions), so there is never a
// disabled user, or a changed password, whose sessions survive, nor an
// event without its change.
type UserAdmin struct {
	users  ports.UserRepository
	hasher ports.PasswordHasher
	clock  ports.Clock
	ids    ports.IDGenerator
	audit  *Auditor
}

// NewUserAdmin returns the use cases.
func NewUserAdmin(users ports.UserRepository, hasher ports.PasswordHasher, clock ports.Clock, ids ports.IDGenerator) (*UserAdmin, error) {
	if users == nil || hasher == nil || clock == nil || ids == nil {
		return nil, errors.New("user administration needs users, a hasher, a clock and ids")
	}
	return &UserAdmin{users: users, hasher: hasher, clock: clock, ids: ids}, nil
}

// SetAuditor makes a record user.added, user.disabled, user.enabled and
// user.password_changed events; call it before use.
func (a *UserAdmin) SetAuditor(x *Auditor) { a.audit = x }

// AddUserInput describes a new user.
type AddUserInput struct {
	Username string
	Password string
	Active   bool
	// Admin makes the user an admin (docs/admin.md).
	Admin bool
}

// Add creates a user and returns it. It returns domain.ErrUserExists when
// the username is taken (case-insensitively) and a validation error for a
// bad username or password.
func (a *UserAdmin) Add(ctx context.Context, in AddUserInput) (domain.User, error) {
	if err := errors.Join(domain.ValidateUsername(in.Username), domain.ValidatePassword(in.Password)); err != nil {
		return domain.User{}, err
	}
	hash, salt, err := a.hasher.Hash(ctx, in.Password)
	if err != nil {
		return domain.User{}, fmt.Errorf("hash password: %w", err)
	}
	now := domain.Normalize(a.clock.Now())
	u := domain.User{ID: a.ids.NewID(), Username: strings.TrimSpace(in.Username), PasswordHash: hash,
		PasswordSalt: salt, Active: in.Active, Admin: in.Admin, DateCreated: now, DateUpdated: now}
	event, events := a.audit.Prepare(ctx, domain.AuditEvent{Type: domain.AuditUserAdded, UserID: u.ID, Username: u.Username})
	if err := a.users.CreateUser(ctx, u, events...); err != nil {
		return domain.User{}, fmt.Errorf("add user: %w", err)
	}
	a.audit.Committed(ctx, event)
	return u, nil
}

// List returns every user.
func (a *UserAdmin) List(ctx context.Context) ([]domain.User, error) {
	return a.users.ListUsers(ctx)
}

// SetActive enables or disables a user; disabling revokes every refresh
// family of the user in the same transaction. It returns
// domain.ErrUserNotFound for an unknown username.
func (a *UserAdmin) SetActive(ctx context.Context, username string, active bool) (domain.User, error) {
	typ := domain.AuditUserDisabled
	if active {
		typ = domain.AuditUserEnabled
	}
	return a.update(ctx, username, typ, !active, func(u *domain.User) { u.Active = active })
}

// SetAdmin grants (admin) or revokes the admin role of the user named
// username (`users admin grant|revoke`); the admin API follows the store
// within a second (docs/admin.md). It returns domain.ErrUserNotFound for
// an unknown username.
func (a *UserAdmin) SetAdmin(ctx context.Context, username string, admin bool) (domain.User, error) {
	typ := domain.AuditUserAdminRevoked
	if admin {
		typ = domain.AuditUserAdminGranted
	}
	return a.update(ctx, username, typ, false, func(u *domain.User) { u.Admin = admin })
}

// SetPassword replaces a user's password and revokes the user's refresh
// families in the same transaction, so sessions started with the old
// password end.
func (a *UserAdmin) SetPassword(ctx context.Context, username, password string) (domain.User, error) {
	if err := domain.ValidatePassword(password); err != nil {
		return domain.User{}, err
	}
	hash, salt, err := a.hasher.Hash(ctx, password)
	if err != nil {
		return domain.User{}, fmt.Errorf("hash password: %w", err)
	}
	return a.update(ctx, username, domain.AuditUserPasswordChanged, true, func(u *domain.User) { u.PasswordHash, u.PasswordSalt = hash, salt })
}

// update changes the user named username and records an event of type
// typ with the change (in its transaction where the store writes events);
// with endSessions the user's refresh families are revoked in that
// transaction too.
func (a *UserAdmin) update(ctx context.Context, username string, typ domain.AuditType, endSessions bool, change func(*domain.User)) (domain.User, error) {
	u, err := a.users.UserByUsername(ctx, username)
	if err != nil {
		return domain.User{}, err
	}
	event, events := a.audit.Prepare(ctx, domain.AuditEvent{Type: typ, UserID: u.ID, Username: u.Username})
	fn := func(cur *domain.User) error {
		change(cur)
		cur.DateUpdated = domain.Normalize(a.clock.Now())
		return nil
	}
	if endSessions {
		u, err = a.users.UpdateUserEndingSessions(ctx, u.ID, a.clock.Now(), fn, events...)
	} else {
		u, err = a.users.UpdateUser(ctx, u.ID, fn, events...)
	}
	if err != nil {
		return u, err
	}
	a.audit.Committed(ctx, event)
	return u, nil
}
