package ports

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// SessionDirectory is what a RefreshStore may implement besides
// SessionStore, for the admin API's list of all sessions (docs/admin.md,
// "Sessions"); without it GET /admin/sessions answers NOT_IMPLEMENTED.
type SessionDirectory interface {
	// AllSessions returns at most limit (0: no bound) of the sessions live
	// at now (neither revoked nor expired) of every user, after the first
	// offset, the last used first (of equal times, the greatest id
	// first), and how many are live in all.
	AllSessions(ctx context.Context, now time.Time, limit, offset int) (page []domain.Session, total int, err error)
}
