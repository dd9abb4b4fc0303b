package memstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

var (
	_ ports.UserDirectory    = (*UserRepository)(nil)
	_ ports.SessionStore     = (*RefreshStore)(nil)
	_ ports.SessionEvictor   = (*RefreshStore)(nil)
	_ ports.AuditQueryLog    = (*AuditLog)(nil)
	_ ports.SessionDirectory = (*RefreshStore)(nil)
)

// DeleteUser implements ports.UserDirectory; without a refresh store
// attached (NewUserRepository) it fails and changes nothing.
func (r *UserRepository) DeleteUser(ctx context.Context, id string, now time.Time, events ...domain.AuditEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions == nil {
		return errors.New("memstore: delete user: no refresh store attached to end the user's sessions (NewUserRepository)")
	}
	if err := eventsSink(r.audit, "delete user", events); err != nil {
		return err
	}
	u, ok := r.byID[id]
	if !ok {
		return domain.ErrUserNotFound
	}
	if u.ActiveAdmin() && !r.otherActiveAdmin(id) {
		return domain.ErrLastAdmin
	}
	if err := r.sessions.RevokeUser(ctx, id, now); err != nil {
		return err
	}
	delete(r.byName, domain.NormalizeUsername(u.Username))
	delete(r.byID, id)
	r.audit.appendEvents(events)
	return nil
}

// UserSessions implements ports.SessionStore.
func (s *RefreshStore) UserSessions(_ context.Context, userID string, now time.Time) ([]domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveSessions(domain.Normalize(now), ownedBy(userID)), nil
}

// EvictSessions implements ports.SessionEvictor under the store's lock.
func (s *RefreshStore) EvictSessions(_ context.Context, userID string, keep int, now time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now = domain.Normalize(now)
	live := s.liveSessions(now, ownedBy(userID))
	var evicted []string
	for _, sess := range live[min(max(keep, 0), len(live)):] {
		evicted = append(evicted, sess.ID)
	}
	s.revoke(now, func(f domain.RefreshFamily) bool { return slices.Contains(evicted, f.ID) })
	return evicted, nil
}

// liveSessions returns the live families at now that of selects as
// sessions, the last used first, then the greatest id; s.mu is held.
func (s *RefreshStore) liveSessions(now time.Time, of func(domain.RefreshFamily) bool) []domain.Session {
	var out []domain.Session
	for _, f := range s.families {
		if of(f) && f.RevokedAt == nil && f.ExpiresAt.After(now) {
			out = append(out, f.Session())
		}
	}
	slices.SortFunc(out, func(a, b domain.Session) int {
		return cmp.Or(b.LastUsed.Compare(a.LastUsed), cmp.Compare(b.ID, a.ID))
	})
	return out
}

// AllSessions implements ports.SessionDirectory.
func (s *RefreshStore) AllSessions(_ context.Context, now time.Time, limit, offset int) ([]domain.Session, int, error) {
	s.mu.Lock()
	all := s.liveSessions(domain.Normalize(now), func(domain.RefreshFamily) bool { return true })
	s.mu.Unlock()
	page := all[min(max(offset, 0), len(all)):]
	if limit > 0 && len(page) > limit {
		page = page[:limit]
	}
	return slices.Clone(page), len(all), nil
}

// ownedBy selects the families of userID.
func ownedBy(userID string) func(domain.RefreshFamily) bool {
	return func(f domain.RefreshFamily) bool { return f.UserID == userID }
}

// Session implements ports.SessionStore.
func (s *RefreshStore) Session(_ context.Context, id string) (domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.families[id]
	if !ok {
		return domain.Session{}, domain.ErrSessionNotFound
	}
	return f.Session(), nil
}

// QueryEvents implements ports.AuditQueryLog with domain.Filter.Match.
func (l *AuditLog) QueryEvents(_ context.Context, q ports.AuditQuery) ([]domain.AuditEvent, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	bt := domain.Normalize(q.Before.Time)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []domain.AuditEvent
	for _, r := range l.events {
		e := r.AuditEvent
		if q.Before.ID != "" && !(e.Time.Before(bt) || (e.Time.Equal(bt) && e.ID < q.Before.ID)) {
			continue
		}
		if q.Filter.Match(auditValues(&e)) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b domain.AuditEvent) int { return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.ID, a.ID)) })
	return out[:min(limit, len(out))], nil
}

// auditValues returns e's values of domain.AuditFields: its username as
// logins compare usernames.
func auditValues(e *domain.AuditEvent) domain.FieldValues {
	return func(f domain.QueryField) (domain.QueryValue, bool) {
		switch f {
		case domain.FieldType:
			return domain.QueryValue{Text: string(e.Type)}, true
		case domain.FieldUsername:
			return domain.QueryValue{Text: domain.NormalizeUsername(e.Username)}, true
		case domain.FieldAddress:
			return domain.QueryValue{Text: e.Address}, true
		case domain.FieldTime:
			return domain.QueryValue{Time: e.Time}, true
		}
		return domain.QueryValue{}, false
	}
}
