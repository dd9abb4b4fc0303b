package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SelfService are the routes any signed-in user has over their own
// account (docs/admin.md): their sessions, signing out another device,
// changing their password.
type SelfService struct {
	login   *Login
	users   *Users
	refresh ports.RefreshStore
	revoked SessionRevocations
}

// NewSelfService returns the use cases; revoked may be nil.
func NewSelfService(login *Login, users *Users, refresh ports.RefreshStore, revoked SessionRevocations) (*SelfService, error) {
	if login == nil || users == nil || refresh == nil {
		return nil, errors.New("self-service needs login, user administration and the refresh store")
	}
	return &SelfService{login: login, users: users, refresh: refresh, revoked: revoked}, nil
}

// bound returns the refresh store bound to actor's caller, and its
// sessions (nil when it shows none).
func (s *SelfService) bound(actor domain.Actor) (ports.RefreshStore, ports.SessionStore) {
	refresh := s.refresh.For(actor.Caller())
	sessions, _ := refresh.(ports.SessionStore)
	return refresh, sessions
}

// Sessions returns page p of the caller's live sessions, the last used
// first, with the id of the caller's own (the sid of the access token
// presented).
func (s *SelfService) Sessions(ctx context.Context, actor domain.Actor, p SessionPage) (SessionList, error) {
	if !actor.Authenticated() {
		return SessionList{}, domain.ErrUnauthenticated
	}
	_, sessions := s.bound(actor)
	if sessions == nil {
		return SessionList{}, domain.ErrNotImplemented
	}
	all, err := sessions.UserSessions(ctx, actor.Principal.ID, s.users.clock.Now())
	if err != nil {
		return SessionList{}, err
	}
	list := sessionList(all, p)
	list.Current = actor.Principal.FamilyID
	return list, nil
}

// RevokeSession ends one of the caller's sessions ("sign out that
// device"); another user's session, or an unknown one, is
// domain.ErrSessionNotFound.
func (s *SelfService) RevokeSession(ctx context.Context, actor domain.Actor, id string) error {
	if !actor.Authenticated() {
		return domain.ErrUnauthenticated
	}
	refresh, sessions := s.bound(actor)
	if sessions == nil {
		return domain.ErrNotImplemented
	}
	p := actor.Principal
	if !domain.IsUUID(id) {
		return domain.ErrSessionNotFound // every family id is a UUID
	}
	sess, err := sessions.Session(ctx, id)
	if err != nil {
		return err
	}
	if sess.UserID != p.ID {
		return domain.ErrSessionNotFound
	}
	return revokeSession(ctx, s.users.audit, refresh, s.revoked, s.users.clock, "revoke session", id,
		fromClient(actor, domain.AuditEvent{Type: domain.AuditSessionRevoked, UserID: p.ID, Username: p.Username, Family: id}))
}

// ChangePasswordInput is POST /auth/password.
type ChangePasswordInput struct {
	Actor           domain.Actor
	CurrentPassword string
	NewPassword     string
	ClientAddr      string
}

// ChangePassword replaces the caller's password when CurrentPassword is
// right, then ends every other session of the caller. The attempt is
// counted by the login throttle first, as a login: past the limit it is a
// domain.KindTooMany error; a wrong current password is
// domain.ErrUnauthenticated, recorded as a failed login. A bad new
// password is a validation error and counts nothing.
//
// The other sessions are revoked after the change committed, one by one
// (ports.RefreshStore has no "all but one"): a login with the old password
// already past its check then may keep its session.
func (s *SelfService) ChangePassword(ctx context.Context, in ChangePasswordInput) error {
	if !in.Actor.Authenticated() {
		return domain.ErrUnauthenticated
	}
	if err := domain.ValidatePassword(in.NewPassword); err != nil {
		return domain.InvalidField("newPassword", "must be 8 to 1024 bytes")
	}
	p := in.Actor.Principal
	u, err := s.users.users.UserByID(ctx, p.ID)
	if errors.Is(err, domain.ErrUserNotFound) {
		return domain.ErrUnauthenticated
	}
	if err != nil {
		return err
	}
	li := LoginInput{Username: u.Username, Password: in.CurrentPassword, ClientAddr: in.ClientAddr}
	keys := s.login.throttleKeys(li)
	at, err := s.login.reserve(ctx, in.Actor.Caller(), li, keys)
	if err != nil {
		return err
	}
	ok := false
	if in.CurrentPassword != "" && len(in.CurrentPassword) <= domain.MaxPasswordBytes {
		v, err := s.login.d.Validator.ValidateUser(ctx, ports.LoginInput{Username: u.Username, Password: in.CurrentPassword})
		if err != nil && !errors.Is(err, domain.ErrUnauthenticated) {
			return fmt.Errorf("change password: %w", err)
		}
		ok = err == nil && v.ID == u.ID
	}
	if !ok {
		s.login.d.Audit.Record(ctx, domain.AuditEvent{Type: domain.AuditLoginFailed, UserID: u.ID, Username: u.Username,
			Address: in.ClientAddr, Reason: domain.AuditReasonBadPassword})
		return domain.ErrUnauthenticated
	}
	s.login.giveBack(ctx, in.Actor.Caller(), keys, usernameThrottleKey(u.Username), at)
	hash, salt, err := s.users.hasher.Hash(ctx, in.NewPassword)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	event, events := s.users.audit.Prepare(ctx, domain.AuditEvent{Type: domain.AuditUserPasswordChanged, UserID: u.ID,
		Username: u.Username, Address: in.ClientAddr, Family: p.FamilyID, Detail: "self-service"})
	if _, err := s.users.users.UpdateUser(ctx, u.ID, func(cur *domain.User) error {
		cur.PasswordHash, cur.PasswordSalt = hash, salt
		cur.DateUpdated = domain.Normalize(s.users.clock.Now())
		return nil
	}, events...); err != nil {
		return err
	}
	s.users.audit.Committed(ctx, event)
	return s.endOtherSessions(ctx, in.Actor)
}

// endOtherSessions revokes every live session of actor but its own.
func (s *SelfService) endOtherSessions(ctx context.Context, actor domain.Actor) error {
	p := actor.Principal
	refresh, sessions := s.bound(actor)
	if sessions == nil || p.FamilyID == "" {
		// Without sessions to tell apart, every session ends, the
		// caller's too: the safe side.
		return refresh.RevokeUser(ctx, p.ID, s.users.clock.Now())
	}
	list, err := sessions.UserSessions(ctx, p.ID, s.users.clock.Now())
	if err != nil {
		return fmt.Errorf("change password: end other sessions: %w", err)
	}
	for _, sess := range list {
		if sess.ID == p.FamilyID {
			continue
		}
		if err := refresh.RevokeFamily(ctx, sess.ID, s.users.clock.Now()); err != nil {
			return fmt.Errorf("change password: end other sessions: %w", err)
		}
		revokedHere(s.revoked, sess.ID)
	}
	return nil
}
