package bunstore

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

var (
	_ ports.UserDirectory  = (*UserRepository)(nil)
	_ ports.SessionStore   = (*RefreshStore)(nil)
	_ ports.SessionEvictor = (*RefreshStore)(nil)
)

// DeleteUser removes the user and revokes every refresh family of theirs
// with the events, in one transaction; the last active admin is
// domain.ErrLastAdmin (keepAnAdmin). The families' rows stay, revoked,
// until they expire and are purged: the revoked-session poll of every
// replica (RevokedFamilies) then ends their access tokens and streams
// as after a logout.
func (r *UserRepository) DeleteUser(ctx context.Context, id string, now time.Time, events ...domain.AuditEvent) (err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	return authInTx(ctx, call, r.db, "delete user", func(ctx context.Context, tx bun.Tx) error {
		u, err := r.userWhere(ctx, tx, "id", id, true)
		if err != nil {
			return err
		}
		if u.ActiveAdmin() {
			if err := keepAnAdmin(ctx, r.db.eng, tx, id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		if err != nil {
			return dberr.Wrap("delete user", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return dberr.Wrap("delete user", err)
		} else if n == 0 {
			return domain.ErrUserNotFound
		}
		if err := revokeIn(ctx, tx, "user_id", id, now); err != nil {
			return err
		}
		return insertEvents(ctx, tx, events)
	})
}

// UserSessions returns the user's live families as sessions, the last
// used first, then the greatest id.
func (s *RefreshStore) UserSessions(ctx context.Context, userID string, now time.Time) (_ []domain.Session, err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	return s.sessions(ctx, "list sessions", `SELECT `+familyColumns+` FROM refresh_families
		WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY issued_at DESC, family_id DESC`,
		userID, engine.TimeArg(now))
}

// Session returns the family id as a session, or
// domain.ErrSessionNotFound.
func (s *RefreshStore) Session(ctx context.Context, id string) (_ domain.Session, err error) {
	if !validText(id) {
		// The id comes from a request path: a NUL or bytes that are not
		// UTF-8 name no session, and must not reach the driver (SQLite
		// reads a NUL as the end of the statement).
		return domain.Session{}, domain.ErrSessionNotFound
	}
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	f, found, err := readFamily(ctx, s.db.eng, s.db.sql, id, false)
	if err != nil {
		return domain.Session{}, err
	}
	if !found {
		return domain.Session{}, domain.ErrSessionNotFound
	}
	return f.Session(), nil
}

// validText reports whether s is UTF-8 without NUL: what a text value
// must be to be bound in a statement.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
