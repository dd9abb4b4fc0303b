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

// SetAuditor makes a record the events of the changes (docs/admin.md,
// "Audit event types"); call it before use.
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
	return a.add(ctx, domain.Principal{}, in)
}

// add is Add done by the admin by (the zero Principal: the command line).
// It records user.added and, for an admin, user.admin_granted.
func (a *UserAdmin) add(ctx context.Context, by domain.Principal, in AddUserInput) (domain.User, error) {
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
	types := []domain.AuditType{domain.AuditUserAdded}
	if u.Admin {
		types = append(types, domain.AuditUserAdminGranted)
	}
	filled, events := a.prepare(ctx, by, u, types...)
	if err := a.users.CreateUser(ctx, u, events...); err != nil {
		return domain.User{}, fmt.Errorf("add user: %w", err)
	}
	a.committed(ctx, filled)
	return u, nil
}

// List returns every user.
func (a *UserAdmin) List(ctx context.Context) ([]domain.User, error) {
	return a.users.ListUsers(ctx)
}

// SetActive enables or disables a user; disabling revokes every refresh
// family of the user in the same transaction. It returns
// domain.ErrUserNotFound for an unknown username, domain.ErrLastAdmin
// for the last active admin.
func (a *UserAdmin) SetActive(ctx context.Context, username string, active bool) (domain.User, error) {
	return a.update(ctx, username, activeEvent(active), !active, func(u *domain.User) { u.Active = active })
}

// SetAdmin grants (admin) or revokes the admin role of the user named
// username (`users admin grant|revoke`); the admin API follows the store
// within a second (docs/admin.md). It returns domain.ErrUserNotFound for
// an unknown username, domain.ErrLastAdmin for the last active admin.
func (a *UserAdmin) SetAdmin(ctx context.Context, username string, admin bool) (domain.User, error) {
	return a.update(ctx, username, adminEvent(admin), false, func(u *domain.User) { u.Admin = admin })
}

// activeEvent and adminEvent are the types of the facts "enabled or
// disabled" and "made or no longer an admin".
func activeEvent(active bool) domain.AuditType {
	if active {
		return domain.AuditUserEnabled
	}
	return domain.AuditUserDisabled
}

func adminEvent(admin bool) domain.AuditType {
	if admin {
		return domain.AuditUserAdminGranted
	}
	return domain.AuditUserAdminRevoked
}

// SetPassword replaces a user's password and revokes the user's refresh
// families in the same transaction, so sessions started with the old
// password end.
func (a *UserAdmin) SetPassword(ctx context.Context, username, password string) (domain.User, error) {
	change, err := a.passwordChange(ctx, password)
	if err != nil {
		return domain.User{}, err
	}
	return a.update(ctx, username, domain.AuditUserPasswordChanged, true, change)
}

// passwordChange checks and hashes password and returns the change that
// sets it.
func (a *UserAdmin) passwordChange(ctx context.Context, password string) (func(*domain.User), error) {
	if err := domain.ValidatePassword(password); err != nil {
		return nil, err
	}
	hash, salt, err := a.hasher.Hash(ctx, password)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	return func(u *domain.User) { u.PasswordHash, u.PasswordSalt = hash, salt }, nil
}

// update changes the user named username with an event of type typ (the
// command line's changes).
func (a *UserAdmin) update(ctx context.Context, username string, typ domain.AuditType, endSessions bool, change func(*domain.User)) (domain.User, error) {
	u, err := a.users.UserByUsername(ctx, username)
	if err != nil {
		return domain.User{}, err
	}
	return a.change(ctx, domain.Principal{}, u, endSessions, change, typ)
}

// change changes the user u for the admin by (the zero Principal: the
// command line) and records one event per type, one per fact changed (in
// the change's transaction where the store writes events); with
// endSessions the user's refresh families are revoked in that
// transaction too.
func (a *UserAdmin) change(ctx context.Context, by domain.Principal, u domain.User, endSessions bool, change func(*domain.User), types ...domain.AuditType) (domain.User, error) {
	filled, events := a.prepare(ctx, by, u, types...)
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

// prepare returns an event of each type about u, made by the admin by
// (none for the command line), filled for a change about to be made, and
// those the store must write with it (Auditor.Prepare).
func (a *UserAdmin) prepare(ctx context.Context, by domain.Principal, u domain.User, types ...domain.AuditType) (filled, stored []domain.AuditEvent) {
	for _, typ := range types {
		e, s := a.audit.Prepare(ctx, byAdmin(by, domain.AuditEvent{Type: typ, UserID: u.ID, Username: u.Username}))
		filled, stored = append(filled, e), append(stored, s...)
	}
	return filled, stored
}

// committed reports the events prepare filled once their change
// committed.
func (a *UserAdmin) committed(ctx context.Context, filled []domain.AuditEvent) {
	for _, e := range filled {
		a.audit.Committed(ctx, e)
	}
}
