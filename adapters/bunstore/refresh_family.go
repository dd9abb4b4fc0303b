package bunstore

import (
	"context"

	"github.com/cachegate/cachegate/ports"
)

var _ ports.SessionChecker = (*RefreshStore)(nil)

// FamilyRevoked implements ports.SessionChecker: one indexed lookup
// (refresh_tokens_family_id_idx).
func (s *RefreshStore) FamilyRevoked(ctx context.Context, familyID string) (_ bool, err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	var revoked bool
	err = withRetry(ctx, func() error {
		return s.db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM refresh_tokens WHERE family_id = ? AND revoked_at IS NOT NULL)",
			familyID).Scan(&revoked)
	})
	if err != nil {
		return false, dbError("read the refresh family", err)
	}
	return revoked, nil
}
