package bunstore

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
)

// RevokeFamily revokes a family at now; a family revoked before keeps its
// time, an unknown one is no error. With events, the revocation and the
// events' rows in auth_events are one transaction. One UPDATE of the
// family's row suffices: a concurrent rotation changes that same row.
func (s *RefreshStore) RevokeFamily(ctx context.Context, familyID string, now time.Time, events ...domain.AuditEvent) (err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	if len(events) == 0 {
		return s.revoke(ctx, call, "family_id", familyID, now)
	}
	return authInTx(ctx, call, s.db, "revoke refresh family", func(ctx context.Context, tx bun.Tx) error {
		if err := revokeIn(ctx, tx, "family_id", familyID, now); err != nil {
			return err
		}
		return insertEvents(ctx, tx, events)
	})
}

// RevokeUser revokes every family of a user at now.
func (s *RefreshStore) RevokeUser(ctx context.Context, userID string, now time.Time) (err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	return s.revoke(ctx, call, "user_id", userID, now)
}

// revoke sets revoked_at on every unrevoked family whose column equals
// value, as a statement of its own.
func (s *RefreshStore) revoke(ctx context.Context, call *bound.Call, column, value string, now time.Time) error {
	err := dberr.WithRetry(ctx, func() error {
		return gated(ctx, call, s.db, func() error {
			_, err := s.db.sql.ExecContext(ctx, revokeQuery, engine.TimeArg(now), bun.Ident(column), value)
			return err
		})
	})
	if err != nil {
		return dberr.Wrap("revoke refresh families", err)
	}
	return nil
}

// evictQuery revokes the user's live families but the ? last used (the
// order of UserSessions), returning those it revoked. Arguments: now,
// user, now, user, now, keep.
//
// It is one statement, run after the login's own family committed, so
// that of concurrent logins of one user the statement that starts last
// sees every family they saved: the user keeps exactly keep. A family
// another eviction revoked meanwhile is returned by one statement only.
const evictQuery = `UPDATE refresh_families SET revoked_at = ?
	WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? AND family_id NOT IN (
		SELECT family_id FROM refresh_families WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?
		ORDER BY issued_at DESC, family_id DESC LIMIT ?)
	RETURNING family_id`

// EvictSessions revokes every live family of the user but the keep last
// used, and returns those it revoked (ports.SessionEvictor); a keep below
// 1 keeps none.
func (s *RefreshStore) EvictSessions(ctx context.Context, userID string, keep int, now time.Time) (_ []string, err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	at := engine.TimeArg(now)
	var evicted []string
	err = dberr.WithRetry(ctx, func() error {
		evicted = evicted[:0]
		return s.db.sql.NewRaw(evictQuery, at, userID, at, userID, at, max(keep, 0)).Scan(ctx, &evicted)
	})
	if err != nil {
		return nil, dberr.Wrap("evict sessions", err)
	}
	return evicted, nil
}

// revokedFamiliesQuery selects the families revoked since ?.
const revokedFamiliesQuery = `SELECT family_id FROM refresh_families WHERE revoked_at IS NOT NULL AND revoked_at >= ?`

// RevokedFamilies returns, sorted, the families revoked at or after
// since: one range scan of the partial index
// refresh_families_revoked_at_idx, which holds revoked families only. The
// rows are sorted here, not in SQL: with ORDER BY, SQLite's planner may
// prefer walking the primary key over the whole table.
func (s *RefreshStore) RevokedFamilies(ctx context.Context, since time.Time) (_ []string, err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	var rows []string
	err = s.db.sql.NewRaw(revokedFamiliesQuery, engine.TimeArg(since)).Scan(ctx, &rows)
	if err != nil {
		return nil, dberr.Wrap("read revoked families", err)
	}
	slices.Sort(rows)
	return rows, nil
}

// PurgeRefresh removes at most limit families whose live token expired
// before now, earliest expiry first, and returns how many it removed. A
// limit below 1 removes nothing. On PostgreSQL replicas purging together
// take disjoint batches (SKIP LOCKED).
func (s *RefreshStore) PurgeRefresh(ctx context.Context, now time.Time, limit int) (_ int, err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	if limit < 1 {
		return 0, nil
	}
	return s.db.exec(ctx, call, "purge refresh families", `DELETE FROM refresh_families WHERE family_id IN (
		SELECT family_id FROM refresh_families WHERE expires_at < ? ORDER BY expires_at LIMIT ?`+s.db.eng.SkipLocked()+`)`,
		engine.TimeArg(now), limit)
}
