package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AdminUsers are the admin API's user and session use cases
// (docs/admin.md). Every change is recorded as the command line records
// it (one event per fact, of the fact's own type), with the acting admin.
type AdminUsers struct {
	ua       *UserAdmin
	check    *AdminCheck
	refresh  ports.RefreshStore
	revoked  SessionRevocations
	dir      ports.UserDirectory // nil: the user store cannot list or delete
	sessions ports.SessionStore  // nil: the refresh store cannot show sessions
}

// NewAdminUsers returns the use cases over ua's stores; check is told of
// changes so this process applies them at once; revoked may be nil.
func NewAdminUsers(ua *UserAdmin, check *AdminCheck, refresh ports.RefreshStore, revoked SessionRevocations) (*AdminUsers, error) {
	if ua == nil || check == nil || refresh == nil {
		return nil, errors.New("the admin API needs user administration, the admin check and the refresh store")
	}
	dir, _ := ua.users.(ports.UserDirectory)
	sessions, _ := refresh.(ports.SessionStore)
	return &AdminUsers{ua: ua, check: check, refresh: refresh, revoked: revoked, dir: dir, sessions: sessions}, nil
}

// List returns the page of users q selects and how many match;
// domain.ErrNotImplemented when the user store cannot list.
func (a *AdminUsers) List(ctx context.Context, q domain.UserQuery) ([]domain.User, int, error) {
	if a.dir == nil {
		return nil, 0, domain.ErrNotImplemented
	}
	return a.dir.FindUsers(ctx, q)
}

// HasAdmin reports whether an active admin exists, so that serve can say
// how the first one is made when none does (README.md, "Web console");
// domain.ErrNotImplemented when the user store cannot list.
func (a *AdminUsers) HasAdmin(ctx context.Context) (bool, error) {
	var q domain.UserQuery
	for _, field := range []string{"admin", "active"} {
		c, err := domain.NewUserCondition("admin", field, domain.OpEq, false, []string{"true"})
		if err != nil {
			return false, err
		}
		q.All = append(q.All, c)
	}
	q.Limit = 1
	page, _, err := a.List(ctx, q)
	return len(page) > 0, err
}

// Get returns a user, or domain.ErrUserNotFound.
func (a *AdminUsers) Get(ctx context.Context, id string) (domain.User, error) {
	if !domain.IsUUID(id) {
		return domain.User{}, domain.ErrUserNotFound
	}
	return a.ua.users.UserByID(ctx, id)
}

// AdminAddUserInput is a user an admin creates.
type AdminAddUserInput struct {
	Username, Password string
	Admin              bool
}

// Add creates an active user: domain.ErrUserExists for a taken username,
// a validation error for a bad username or password.
func (a *AdminUsers) Add(ctx context.Context, by domain.Principal, in AdminAddUserInput) (domain.User, error) {
	return a.ua.add(ctx, by, AddUserInput{Username: in.Username, Password: in.Password, Active: true, Admin: in.Admin})
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
func (a *AdminUsers) Patch(ctx context.Context, by domain.Principal, id string, p UserPatch) (domain.User, error) {
	if (p.Active != nil && !*p.Active || p.Admin != nil && !*p.Admin) && id == by.ID {
		return domain.User{}, domain.ErrOwnAdminChange
	}
	var types []domain.AuditType
	if p.Active != nil {
		types = append(types, activeEvent(*p.Active))
	}
	if p.Admin != nil {
		types = append(types, adminEvent(*p.Admin))
	}
	u, err := a.Get(ctx, id)
	if err != nil {
		return domain.User{}, err
	}
	u, err = a.ua.change(ctx, by, u, p.Active != nil && !*p.Active, func(cur *domain.User) {
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

// SetPassword replaces a user's password and ends every session of the
// user in the same transaction (user.password_changed).
func (a *AdminUsers) SetPassword(ctx context.Context, by domain.Principal, id, password string) error {
	if err := domain.ValidatePassword(password); err != nil {
		return err
	}
	u, err := a.Get(ctx, id)
	if err != nil {
		return err
	}
	change, err := a.ua.passwordChange(ctx, password)
	if err != nil {
		return err
	}
	_, err = a.ua.change(ctx, by, u, true, change, domain.AuditUserPasswordChanged)
	return err
}

// Delete removes a user and revokes every session of theirs
// (user.deleted); domain.ErrNotImplemented when the user store cannot
// delete. An admin cannot delete themself (domain.ErrOwnAdminChange), nor
// the last active admin (domain.ErrLastAdmin).
func (a *AdminUsers) Delete(ctx context.Context, by domain.Principal, id string) error {
	if a.dir == nil {
		return domain.ErrNotImplemented
	}
	if id == by.ID {
		return domain.ErrOwnAdminChange
	}
	u, err := a.Get(ctx, id)
	if err != nil {
		return err
	}
	filled, events := a.ua.prepare(ctx, by, u, domain.AuditUserDeleted)
	if err := a.dir.DeleteUser(ctx, id, a.ua.clock.Now(), events...); err != nil {
		return err
	}
	a.check.Forget(id)
	a.ua.committed(ctx, filled)
	return nil
}

// Sessions returns page p of the live sessions of a user, the last used
// first; domain.ErrUserNotFound for an unknown user,
// domain.ErrNotImplemented when the refresh store cannot show sessions.
func (a *AdminUsers) Sessions(ctx context.Context, userID string, p SessionPage) (SessionList, error) {
	if a.sessions == nil {
		return SessionList{}, domain.ErrNotImplemented
	}
	if _, err := a.Get(ctx, userID); err != nil {
		return SessionList{}, err
	}
	all, err := a.sessions.UserSessions(ctx, userID, a.ua.clock.Now())
	if err != nil {
		return SessionList{}, err
	}
	return sessionList(all, p), nil
}

// RevokeSessions revokes every session of a user (one session.revoked
// event, detail "all").
func (a *AdminUsers) RevokeSessions(ctx context.Context, by domain.Principal, userID string) error {
	u, err := a.Get(ctx, userID)
	if err != nil {
		return err
	}
	var live []domain.Session
	if a.sessions != nil {
		live, _ = a.sessions.UserSessions(ctx, userID, a.ua.clock.Now())
	}
	if err := a.refresh.RevokeUser(ctx, userID, a.ua.clock.Now()); err != nil {
		return fmt.Errorf("revoke sessions: %w", err)
	}
	for _, s := range live {
		a.revokedHere(s.ID)
	}
	// RevokeUser takes no events (ports.RefreshStore), so the event is
	// recorded right after the revocation.
	a.ua.audit.Record(ctx, byAdmin(by, domain.AuditEvent{Type: domain.AuditSessionRevoked,
		UserID: u.ID, Username: u.Username, Detail: "all"}))
	return nil
}

// RevokeSession revokes one session: domain.ErrSessionNotFound for an
// unknown one.
func (a *AdminUsers) RevokeSession(ctx context.Context, by domain.Principal, sid string) error {
	if a.sessions == nil {
		return domain.ErrNotImplemented
	}
	if !domain.IsUUID(sid) {
		return domain.ErrSessionNotFound // every family id is a UUID
	}
	s, err := a.sessions.Session(ctx, sid)
	if err != nil {
		return err
	}
	e := byAdmin(by, domain.AuditEvent{Type: domain.AuditSessionRevoked, UserID: s.UserID, Family: sid})
	if u, err := a.ua.users.UserByID(ctx, s.UserID); err == nil {
		e.Username = u.Username
	}
	return revokeSession(ctx, a.ua.audit, a.refresh, a.revoked, a.ua.clock, sid, e)
}

func (a *AdminUsers) revokedHere(sid string) {
	if a.revoked != nil {
		a.revoked.Add(sid)
	}
}

// revokeSession revokes the family sid with the event e, applies it in
// this process at once, and reports the event after the commit.
func revokeSession(ctx context.Context, audit *Auditor, refresh ports.RefreshStore, revoked SessionRevocations, clock ports.Clock, sid string, e domain.AuditEvent) error {
	event, events := audit.Prepare(ctx, e)
	if err := refresh.RevokeFamily(ctx, sid, clock.Now(), events...); err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	if revoked != nil {
		revoked.Add(sid)
	}
	audit.Committed(ctx, event)
	return nil
}
