package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// RefreshStore is an in-memory ports.RefreshStore, safe for concurrent
// use. Every method holds one lock, so rotation is trivially atomic. Times
// are kept and compared at microsecond precision in UTC, as the database
// stores do.
type RefreshStore struct {
	mu     sync.Mutex
	tokens map[string]domain.RefreshRecord
	audit  *AuditLog
}

// SetAuditLog makes RevokeFamily append the events it is given to l,
// under the store's lock, with the revocation; call it before use.
func (s *RefreshStore) SetAuditLog(l *AuditLog) { s.audit = l }

var (
	_ ports.RefreshStore   = (*RefreshStore)(nil)
	_ ports.RevocationFeed = (*RefreshStore)(nil)
)

// NewRefreshStore returns an empty store.
func NewRefreshStore() *RefreshStore {
	return &RefreshStore{tokens: map[string]domain.RefreshRecord{}}
}

// SaveRefresh stores a newly issued refresh token; an id already stored is
// an error.
func (s *RefreshStore) SaveRefresh(_ context.Context, r domain.RefreshRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insert(r)
}

// RotateRefresh marks the token oldID used at now, stores next and
// returns it. It returns domain.ErrUnauthenticated when oldID is unknown,
// revoked or expired (ExpiresAt not after now), and
// domain.ErrRefreshTokenReused, having revoked oldID's whole family at
// now, when oldID was already used and is otherwise still valid. A reuse
// within grace of the first use stores nothing, revokes nothing and
// returns the family's live token (ErrUnauthenticated when it has none).
// The successor must belong to the family and user of oldID, and its id
// must be new; otherwise RotateRefresh fails with an internal error and
// changes nothing.
func (s *RefreshStore) RotateRefresh(_ context.Context, oldID string, next domain.RefreshRecord, now time.Time, grace time.Duration) (domain.RefreshRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now = authTime(now)
	old, ok := s.tokens[oldID]
	switch {
	case !ok, old.RevokedAt != nil, !old.ExpiresAt.After(now):
		return domain.RefreshRecord{}, domain.ErrUnauthenticated
	case old.UsedAt != nil && grace > 0 && old.UsedAt.After(now.Add(-grace)):
		return s.live(old.FamilyID, now)
	case old.UsedAt != nil:
		s.revoke(now, func(r domain.RefreshRecord) bool { return r.FamilyID == old.FamilyID })
		return domain.RefreshRecord{}, domain.ErrRefreshTokenReused
	case next.FamilyID != old.FamilyID || next.UserID != old.UserID:
		return domain.RefreshRecord{}, fmt.Errorf("memstore: rotate refresh token: the successor must keep the family and user of the token it replaces")
	}
	if err := s.insert(next); err != nil {
		return domain.RefreshRecord{}, err
	}
	old.UsedAt = authTimePtr(&now)
	s.tokens[oldID] = old
	return s.tokens[next.ID], nil
}

// live returns the family's live token: unused, unrevoked and unexpired
// at now; the newest when (against the rule) there are several.
func (s *RefreshStore) live(familyID string, now time.Time) (domain.RefreshRecord, error) {
	var head domain.RefreshRecord
	found := false
	for _, r := range s.tokens {
		if r.FamilyID != familyID || r.UsedAt != nil || r.RevokedAt != nil || !r.ExpiresAt.After(now) {
			continue
		}
		if !found || r.IssuedAt.After(head.IssuedAt) || (r.IssuedAt.Equal(head.IssuedAt) && r.ID > head.ID) {
			head, found = r, true
		}
	}
	if !found {
		return domain.RefreshRecord{}, domain.ErrUnauthenticated
	}
	return head, nil
}

// RevokeFamily revokes every token of a family at now; tokens already
// revoked keep their time. An unknown family is no error. The events are
// appended to the attached audit log (SetAuditLog) with the revocation.
func (s *RefreshStore) RevokeFamily(_ context.Context, familyID string, now time.Time, events ...domain.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := eventsSink(s.audit, "revoke family", events); err != nil {
		return err
	}
	s.revoke(now, func(r domain.RefreshRecord) bool { return r.FamilyID == familyID })
	s.audit.appendEvents(events)
	return nil
}

// RevokeUser revokes every token of every family of a user at now.
func (s *RefreshStore) RevokeUser(_ context.Context, userID string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoke(now, func(r domain.RefreshRecord) bool { return r.UserID == userID })
	return nil
}

// RevokedFamilies returns, each once and sorted, the families with a
// token revoked at or after since.
func (s *RefreshStore) RevokedFamilies(_ context.Context, since time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	since = authTime(since)
	seen := map[string]bool{}
	for _, r := range s.tokens {
		if r.RevokedAt != nil && !r.RevokedAt.Before(since) {
			seen[r.FamilyID] = true
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	slices.Sort(out)
	return out, nil
}

// PurgeRefresh removes at most limit records that expired before now,
// earliest expiry first, and returns how many it removed. A limit below 1
// removes nothing.
func (s *RefreshStore) PurgeRefresh(_ context.Context, now time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now = authTime(now)
	var expired []domain.RefreshRecord
	for _, r := range s.tokens {
		if r.ExpiresAt.Before(now) {
			expired = append(expired, r)
		}
	}
	slices.SortFunc(expired, func(a, b domain.RefreshRecord) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	expired = expired[:max(0, min(limit, len(expired)))]
	for _, r := range expired {
		delete(s.tokens, r.ID)
	}
	return len(expired), nil
}

func (s *RefreshStore) insert(r domain.RefreshRecord) error {
	if _, taken := s.tokens[r.ID]; taken {
		return fmt.Errorf("memstore: save refresh token: id %q is already stored", r.ID)
	}
	r.IssuedAt = authTime(r.IssuedAt)
	r.ExpiresAt = authTime(r.ExpiresAt)
	r.UsedAt = authTimePtr(r.UsedAt)
	r.RevokedAt = authTimePtr(r.RevokedAt)
	s.tokens[r.ID] = r
	return nil
}

// revoke sets RevokedAt on every unrevoked record that match selects.
func (s *RefreshStore) revoke(now time.Time, match func(domain.RefreshRecord) bool) {
	for id, r := range s.tokens {
		if r.RevokedAt == nil && match(r) {
			r.RevokedAt = authTimePtr(&now)
			s.tokens[id] = r
		}
	}
}
