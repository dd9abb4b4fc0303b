package memstore

import (
	"context"

	"github.com/cachegate/cachegate/ports"
)

var _ ports.SessionChecker = (*RefreshStore)(nil)

// FamilyRevoked implements ports.SessionChecker.
func (s *RefreshStore) FamilyRevoked(_ context.Context, familyID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.tokens {
		if r.FamilyID == familyID && r.RevokedAt != nil {
			return true, nil
		}
	}
	return false, nil
}
