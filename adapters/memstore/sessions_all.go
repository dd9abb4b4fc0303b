package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

var _ ports.SessionDirectory = (*RefreshStore)(nil)

// AllSessions returns a page of every user's live families as sessions,
// the last used first, then the greatest id (ports.SessionDirectory).
func (s *RefreshStore) AllSessions(_ context.Context, now time.Time, limit, offset int) ([]domain.Session, int, error) {
	s.mu.Lock()
	now = authTime(now)
	var all []domain.Session
	for _, f := range s.families {
		if f.RevokedAt == nil && f.ExpiresAt.After(now) {
			all = append(all, f.Session())
		}
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b domain.Session) int {
		return cmp.Or(b.LastUsed.Compare(a.LastUsed), cmp.Compare(b.ID, a.ID))
	})
	page := all[min(max(offset, 0), len(all)):]
	if limit > 0 && len(page) > limit {
		page = page[:limit]
	}
	return slices.Clone(page), len(all), nil
}
