package application

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Sessions returns page p of the live sessions of a user, the last used
// first; domain.ErrUserNotFound for an unknown user,
// domain.ErrNotImplemented when the refresh store cannot show sessions.
func (a *Users) Sessions(ctx context.Context, userID string, p SessionPage) (SessionList, error) {
	if a.sessions == nil {
		return SessionList{}, domain.ErrNotImplemented
	}
	if _, err := a.Get(ctx, userID); err != nil {
		return SessionList{}, err
	}
	all, err := a.sessions.UserSessions(ctx, userID, a.clock.Now())
	if err != nil {
		return SessionList{}, err
	}
	return sessionList(all, p), nil
}

// RevokeSessions revokes every session of a user (one session.revoked
// event, detail "all").
func (a *Users) RevokeSessions(ctx context.Context, actor domain.Actor, userID string) error {
	u, err := a.Get(ctx, userID)
	if err != nil {
		return err
	}
	var live []domain.Session
	if a.sessions != nil {
		live, _ = a.sessions.UserSessions(ctx, userID, a.clock.Now())
	}
	if err := a.refresh.RevokeUser(ctx, userID, a.clock.Now()); err != nil {
		return fmt.Errorf("revoke sessions: %w", err)
	}
	for _, s := range live {
		revokedHere(a.revoked, s.ID)
	}
	// RevokeUser takes no events (ports.RefreshStore), so the event is
	// recorded right after the revocation.
	a.audit.Record(ctx, byAdmin(actor, domain.AuditEvent{Type: domain.AuditSessionRevoked,
		UserID: u.ID, Username: u.Username, Detail: "all"}))
	return nil
}

// RevokeSession revokes one session: domain.ErrSessionNotFound for an
// unknown one.
func (a *Users) RevokeSession(ctx context.Context, actor domain.Actor, sid string) error {
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
	e := byAdmin(actor, domain.AuditEvent{Type: domain.AuditSessionRevoked, UserID: s.UserID, Family: sid})
	if u, err := a.users.UserByID(ctx, s.UserID); err == nil {
		e.Username = u.Username
	}
	return revokeSession(ctx, a.audit, a.refresh, a.revoked, a.clock, "revoke session", sid, e)
}

// revokeSession revokes the family sid with the event e, applies it in
// this process at once, and reports the event after the commit; a failure
// is named op.
func revokeSession(ctx context.Context, audit *AuditTrail, refresh ports.RefreshStore, revoked SessionRevocations, clock ports.Clock,
	op, sid string, e domain.AuditEvent) error {
	event, events := audit.Prepare(ctx, e)
	if err := refresh.RevokeFamily(ctx, sid, clock.Now(), events...); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	revokedHere(revoked, sid)
	audit.Committed(ctx, event)
	return nil
}
