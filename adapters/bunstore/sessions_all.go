package bunstore

import (
	"context"
	"strconv"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

var _ ports.SessionDirectory = (*RefreshStore)(nil)

// AllSessions returns a page of every user's live families as sessions,
// the last used first, then the greatest id, and how many are live
// (ports.SessionDirectory). The page is cut in the database; the live
// families are at most --max-sessions-per-user a user, and the admin
// list is read by people, not in a loop (docs/admin.md, "Sessions").
func (s *RefreshStore) AllSessions(ctx context.Context, now time.Time, limit, offset int) (_ []domain.Session, total int, err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	const live = ` FROM refresh_families WHERE revoked_at IS NULL AND expires_at > ?`
	if err := s.db.sql.QueryRowContext(ctx, `SELECT COUNT(*)`+live, engine.TimeArg(now)).Scan(&total); err != nil {
		return nil, 0, dberr.Wrap("list all sessions", err)
	}
	q := `SELECT ` + familyColumns + live + ` ORDER BY issued_at DESC, family_id DESC`
	if limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(limit)
	} else if offset > 0 {
		q += ` LIMIT ` + strconv.Itoa(total) // both dialects need a LIMIT before OFFSET
	}
	if offset > 0 {
		q += ` OFFSET ` + strconv.Itoa(offset)
	}
	out, err := s.sessions(ctx, "list all sessions", q, engine.TimeArg(now))
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// sessions reads the families query selects (familyColumns) as sessions;
// a failure is wrapped naming op.
func (s *RefreshStore) sessions(ctx context.Context, op, query string, args ...any) ([]domain.Session, error) {
	rows, err := s.db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, dberr.Wrap(op, err)
	}
	out, err := scanAll(rows, func(s rowScanner) (domain.Session, error) {
		f, err := scanFamily(s)
		return f.Session(), err
	})
	if err != nil {
		return nil, dberr.Wrap(op, err)
	}
	return out, nil
}
