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
// use: one domain.RefreshFamily per family. Every method holds one lock,
// so rotation is trivially atomic.
type RefreshStore struct {
	mu       sync.Mutex
	families map[string]domain.RefreshFamily
	audit    *AuditLog
}

var (
	_ ports.RefreshStore   = (*RefreshStore)(nil)
	_ ports.RevocationFeed = (*RefreshStore)(nil)
)

// NewRefreshStore returns an empty store whose revocations append their
// events to audit under the store's lock; with a nil audit such events are
// refused.
func NewRefreshStore(audit *AuditLog) *RefreshStore {
	return &RefreshStore{families: map[string]domain.RefreshFamily{}, audit: audit}
}

// Families returns how many families the store holds: storage grows with
// them, not with rotations.
func (s *RefreshStore) Families() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.families)
}

// SaveRefresh implements ports.RefreshStore.
func (s *RefreshStore) SaveRefresh(_ context.Context, r domain.RefreshRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.families[r.FamilyID]; taken {
		return fmt.Errorf("memstore: save refresh token: family %q is already stored", r.FamilyID)
	}
	s.families[r.FamilyID] = domain.NewRefreshFamily(r)
	return nil
}

// RotateRefresh implements ports.RefreshStore.
func (s *RefreshStore) RotateRefresh(_ context.Context, presented domain.Claims, next domain.RefreshRecord, now time.Time, grace time.Duration,
	events ...domain.AuditEvent) (ports.Rotation, error) {
	if next.FamilyID != presented.FamilyID || next.UserID != presented.Subject || next.ID == presented.ID {
		return ports.Rotation{}, fmt.Errorf("memstore: rotate refresh token: the successor must keep the family and user of the token it replaces, with a new id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now = domain.Normalize(now)
	f, ok := s.families[presented.FamilyID]
	v := domain.RefreshRefused
	if ok {
		v = f.Judge(presented, now, grace)
	}
	if !presented.Digest.IsZero() && v != domain.RefreshRotate {
		// Claims read unchecked act on nothing but a rotation.
		v = domain.RefreshUnproven
	}
	switch v {
	case domain.RefreshRotate:
		if f.Holds(next.ID) {
			return ports.Rotation{}, fmt.Errorf("memstore: rotate refresh token: id %q is already stored in family %q", next.ID, f.ID)
		}
		f = f.Rotated(next, now)
		s.families[f.ID] = f
		return ports.Rotation{Outcome: v, Record: f.Current()}, nil
	case domain.RefreshReissue:
		return ports.Rotation{Outcome: v, Record: f.Current()}, nil
	case domain.RefreshReused:
		if err := eventsSink(s.audit, "revoke a reused refresh family", events); err != nil {
			return ports.Rotation{}, err
		}
		s.revoke(now, func(f domain.RefreshFamily) bool { return f.ID == presented.FamilyID })
		s.audit.appendEvents(events)
	}
	return ports.Rotation{Outcome: v}, nil
}

// RevokeFamily implements ports.RefreshStore.
func (s *RefreshStore) RevokeFamily(_ context.Context, familyID string, now time.Time, events ...domain.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := eventsSink(s.audit, "revoke family", events); err != nil {
		return err
	}
	s.revoke(now, func(f domain.RefreshFamily) bool { return f.ID == familyID })
	s.audit.appendEvents(events)
	return nil
}

// RevokeUser implements ports.RefreshStore.
func (s *RefreshStore) RevokeUser(_ context.Context, userID string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoke(now, ownedBy(userID))
	return nil
}

// RevokedFamilies returns, sorted, the families revoked at or after since.
func (s *RefreshStore) RevokedFamilies(_ context.Context, since time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	since = domain.Normalize(since)
	var out []string
	for _, f := range s.families {
		if f.RevokedAt != nil && !f.RevokedAt.Before(since) {
			out = append(out, f.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// PurgeRefresh implements ports.RefreshStore, earliest expiry first.
func (s *RefreshStore) PurgeRefresh(_ context.Context, now time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now = domain.Normalize(now)
	var expired []domain.RefreshFamily
	for _, f := range s.families {
		if f.ExpiresAt.Before(now) {
			expired = append(expired, f)
		}
	}
	slices.SortFunc(expired, func(a, b domain.RefreshFamily) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	expired = expired[:max(0, min(limit, len(expired)))]
	for _, f := range expired {
		delete(s.families, f.ID)
	}
	return len(expired), nil
}

// revoke sets RevokedAt on every unrevoked family that match selects.
func (s *RefreshStore) revoke(now time.Time, match func(domain.RefreshFamily) bool) {
	for id, f := range s.families {
		if f.RevokedAt == nil && match(f) {
			f.RevokedAt = domain.NormalizePtr(&now)
			s.families[id] = f
		}
	}
}

// For implements ports.RefreshStore: memory bounds no caller.
func (s *RefreshStore) For(domain.Caller) ports.RefreshStore { return s }
