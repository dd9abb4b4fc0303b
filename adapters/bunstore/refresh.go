package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// RefreshStore is the ports.RefreshStore of the refresh_tokens table.
type RefreshStore struct {
	db     *bun.DB
	bounds bounds
	// rotation holds the statements of RotateRefresh: mark used, insert
	// the successor.
	rotation *preparedSet
	// group batches concurrent rotations on SQLite (rotation_group.go).
	group rotationGroup
}

var (
	_ ports.RefreshStore   = (*RefreshStore)(nil)
	_ ports.RevocationFeed = (*RefreshStore)(nil)
)

// NewRefreshStore returns the store over db, which must come from Open and
// have been migrated.
func NewRefreshStore(db *bun.DB, opts ...RepoOption) *RefreshStore {
	return &RefreshStore{db: db, bounds: newBounds(opts), rotation: &preparedSet{db: db, queries: []string{
		rotateUseQuery,
		insertRefreshQuery,
	}}}
}

const (
	rotateUseQuery = `UPDATE refresh_tokens SET used_at = ?
		WHERE id = ? AND revoked_at IS NULL AND expires_at > ? AND used_at IS NULL
		RETURNING family_id, user_id`
	// liveRefreshQuery reads a family's live token; the rotation rule
	// keeps it to one row, the order picks the newest should there be more.
	liveRefreshQuery = `SELECT id, family_id, user_id, issued_at, expires_at FROM refresh_tokens
		WHERE family_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?
		ORDER BY issued_at DESC, id DESC LIMIT 1`
	insertRefreshQuery = `INSERT INTO refresh_tokens
		(id, family_id, user_id, issued_at, expires_at, used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// refreshState is what a refused rotation reads of the old token.
type refreshState struct {
	FamilyID  string   `bun:"family_id"`
	ExpiresAt nullTime `bun:"expires_at"`
	UsedAt    nullTime `bun:"used_at"`
	RevokedAt nullTime `bun:"revoked_at"`
}

// errNotRotated tells RotateRefresh's transaction found no usable old
// token; it never leaves this file.
var errNotRotated = errors.New("bunstore: refresh token not rotated")

// maxRevokePasses bounds the statements one revocation runs; see revoke.
const maxRevokePasses = 16

// SaveRefresh stores a newly issued refresh token; an id already stored
// is an internal error.
func (s *RefreshStore) SaveRefresh(ctx context.Context, r domain.RefreshRecord) (err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	if err := insertRefresh(ctx, s.db, r); err != nil {
		return dbError("save refresh token", err)
	}
	return nil
}

// RotateRefresh marks the token oldID used at now, stores next and
// returns it, in one transaction whose first statement is the conditional
//
//	UPDATE … SET used_at = now WHERE id = oldID AND used_at IS NULL
//	AND revoked_at IS NULL AND expires_at > now
//
// Concurrent rotations of one token queue on its row (PostgreSQL) or on
// the database (SQLite); the first sets used_at, and every later one then
// matches no row, so at most one stores a successor. When no row matched,
// the token is read: unknown, revoked or expired (ExpiresAt not after now)
// is domain.ErrUnauthenticated. Used less than grace ago (grace positive)
// is forgiven: the family's live token is read and returned, and nothing
// is stored or revoked; the read is a statement of its own, so on
// PostgreSQL it sees the successor the first use committed. Used earlier
// is domain.ErrRefreshTokenReused, after the whole family was revoked at
// now. The successor must belong to the family and user of oldID and have
// a new id; otherwise RotateRefresh fails with an internal error and
// changes nothing.
func (s *RefreshStore) RotateRefresh(ctx context.Context, oldID string, next domain.RefreshRecord, now time.Time, grace time.Duration) (_ domain.RefreshRecord, err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	r := &rotation{ctx: ctx, oldID: oldID, next: next, now: now}
	if gate := writeGate(s.db); gate != nil {
		err = s.group.rotate(ctx, gate, r, func(ctx context.Context, batch []*rotation) { s.commitGroup(ctx, batch) })
	} else {
		err = authInTx(ctx, s.db, "rotate refresh token", func(ctx context.Context, tx bun.Tx) error {
			return s.rotateIn(ctx, tx, r)
		})
	}
	switch {
	case errors.Is(err, errNotRotated):
		return s.refuse(ctx, oldID, now, grace)
	case err != nil:
		return domain.RefreshRecord{}, err
	}
	next.IssuedAt, next.ExpiresAt = authStoredTime(next.IssuedAt), authStoredTime(next.ExpiresAt)
	next.UsedAt, next.RevokedAt = domain.NormalizePtr(next.UsedAt), domain.NormalizePtr(next.RevokedAt)
	return next, nil
}

// rotateIn runs one rotation's statements in tx: errNotRotated when the
// old token matched nothing (nothing was written), another error when the
// transaction must roll back.
func (s *RefreshStore) rotateIn(ctx context.Context, tx bun.Tx, r *rotation) error {
	var family, user string
	row, err := s.rotation.queryRow(ctx, tx, 0, driverTime(s.db, r.now), r.oldID, driverTime(s.db, r.now))
	if err != nil {
		return dbError("prepare refresh rotation", err)
	}
	err = row.Scan(&family, &user)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return errNotRotated
	case err != nil:
		return dbError("rotate refresh token", err)
	case family != r.next.FamilyID || user != r.next.UserID:
		return fmt.Errorf("bunstore: rotate refresh token: the successor must keep the family and user of the token it replaces")
	}
	next := r.next
	if _, err := s.rotation.exec(ctx, tx, 1, next.ID, next.FamilyID, next.UserID,
		driverTime(s.db, next.IssuedAt), driverTime(s.db, next.ExpiresAt),
		driverNullTime(s.db, next.UsedAt), driverNullTime(s.db, next.RevokedAt)); err != nil {
		return dbError("store the successor refresh token", err)
	}
	return nil
}

// commitGroup runs the rotations of batch in one transaction and hands
// each its result. Rotations whose old token matched nothing write
// nothing and do not disturb the others. Any other failure rolls the
// whole group back, and each rotation is then run again in a transaction
// of its own, so one bad rotation never decides the fate of another.
// The caller holds the write gate.
func (s *RefreshStore) commitGroup(ctx context.Context, batch []*rotation) {
	results := make([]error, len(batch))
	err := inTx(ctx, s.db, "rotate refresh tokens", func(ctx context.Context, tx bun.Tx) error {
		for i, r := range batch {
			if err := r.ctx.Err(); err != nil {
				results[i] = dbError("rotate refresh token", err)
				continue
			}
			err := s.rotateIn(ctx, tx, r)
			if err != nil && !errors.Is(err, errNotRotated) {
				return err
			}
			results[i] = err
		}
		return nil
	})
	if err != nil {
		for i, r := range batch {
			if len(batch) == 1 {
				results[i] = err
				break
			}
			results[i] = inTx(r.ctx, s.db, "rotate refresh token", func(ctx context.Context, tx bun.Tx) error {
				return s.rotateIn(ctx, tx, r)
			})
		}
	}
	for i, r := range batch {
		r.done <- results[i]
	}
}

// refuse tells why oldID could not rotate: within grace of its first use
// it returns the family's live token; otherwise it fails, revoking the
// family when oldID was used before.
func (s *RefreshStore) refuse(ctx context.Context, oldID string, now time.Time, grace time.Duration) (domain.RefreshRecord, error) {
	var st refreshState
	err := s.db.NewRaw(`SELECT family_id, expires_at, used_at, revoked_at FROM refresh_tokens WHERE id = ?`, oldID).Scan(ctx, &st)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.RefreshRecord{}, domain.ErrUnauthenticated
	case err != nil:
		return domain.RefreshRecord{}, dbError("read refresh token", err)
	case st.RevokedAt.Valid, !st.ExpiresAt.Time.After(authStoredTime(now)):
		return domain.RefreshRecord{}, domain.ErrUnauthenticated
	case st.UsedAt.Valid && grace > 0 && st.UsedAt.Time.After(authStoredTime(now.Add(-grace))):
		return s.live(ctx, st.FamilyID, now)
	case st.UsedAt.Valid:
		if err := s.revoke(ctx, "family_id", st.FamilyID, now); err != nil {
			return domain.RefreshRecord{}, err
		}
		return domain.RefreshRecord{}, domain.ErrRefreshTokenReused
	default:
		// Unused, live and unrevoked, yet the update matched nothing: the
		// row changed in between. Refusing is the safe answer.
		return domain.RefreshRecord{}, domain.ErrUnauthenticated
	}
}

// live returns the family's live token at now; domain.ErrUnauthenticated
// when it has none (revoked, expired).
func (s *RefreshStore) live(ctx context.Context, familyID string, now time.Time) (domain.RefreshRecord, error) {
	var row struct {
		ID        string   `bun:"id"`
		FamilyID  string   `bun:"family_id"`
		UserID    string   `bun:"user_id"`
		IssuedAt  nullTime `bun:"issued_at"`
		ExpiresAt nullTime `bun:"expires_at"`
	}
	err := s.db.NewRaw(liveRefreshQuery, familyID, timeArg(now)).Scan(ctx, &row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.RefreshRecord{}, domain.ErrUnauthenticated
	case err != nil:
		return domain.RefreshRecord{}, dbError("read the live refresh token", err)
	}
	return domain.RefreshRecord{ID: row.ID, FamilyID: row.FamilyID, UserID: row.UserID,
		IssuedAt: row.IssuedAt.Time, ExpiresAt: row.ExpiresAt.Time}, nil
}

// RevokeFamily revokes every token of a family at now; tokens already
// revoked keep their time. An unknown family is no error. With events,
// the revocation and the events' rows in auth_events are one transaction.
func (s *RefreshStore) RevokeFamily(ctx context.Context, familyID string, now time.Time, events ...domain.AuditEvent) (err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	if len(events) == 0 {
		return s.revoke(ctx, "family_id", familyID, now)
	}
	return authInTx(ctx, s.db, "revoke refresh tokens", func(ctx context.Context, tx bun.Tx) error {
		if err := revokeIn(ctx, tx, "family_id", familyID, now); err != nil {
			return err
		}
		return insertEvents(ctx, tx, events)
	})
}

// RevokeUser revokes every token of every family of a user at now.
func (s *RefreshStore) RevokeUser(ctx context.Context, userID string, now time.Time) (err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	return s.revoke(ctx, "user_id", userID, now)
}

// revoke sets revoked_at on every unrevoked token whose column equals
// value. A rotation that committed while the UPDATE ran may have inserted
// a successor the statement's snapshot did not see (PostgreSQL, READ
// COMMITTED); the statement waited for that rotation because it locked a
// row of the set. So the UPDATE is repeated until it matches nothing: then
// every token of the set is revoked and no rotation can add another.
func (s *RefreshStore) revoke(ctx context.Context, column, value string, now time.Time) error {
	for range maxRevokePasses {
		var n int64
		err := withRetry(ctx, func() error {
			res, err := s.db.ExecContext(ctx, `UPDATE refresh_tokens SET revoked_at = ? WHERE ? = ? AND revoked_at IS NULL`,
				timeArg(now), bun.Ident(column), value)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return dbError("revoke refresh tokens", err)
		}
		if n == 0 {
			return nil
		}
	}
	return fmt.Errorf("bunstore: revoke refresh tokens: still finding unrevoked tokens after %d passes", maxRevokePasses)
}

// revokeIn is revoke inside tx. Each UPDATE of a READ COMMITTED
// transaction takes a fresh snapshot, so repeating it until it matches
// nothing catches a successor a concurrent rotation committed, as revoke
// does.
func revokeIn(ctx context.Context, tx bun.Tx, column, value string, now time.Time) error {
	for range maxRevokePasses {
		res, err := tx.ExecContext(ctx, `UPDATE refresh_tokens SET revoked_at = ? WHERE ? = ? AND revoked_at IS NULL`,
			timeArg(now), bun.Ident(column), value)
		if err != nil {
			return dbError("revoke refresh tokens", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return dbError("revoke refresh tokens", err)
		}
		if n == 0 {
			return nil
		}
	}
	return fmt.Errorf("bunstore: revoke refresh tokens: still finding unrevoked tokens after %d passes", maxRevokePasses)
}

// revokedFamiliesQuery selects the families of tokens revoked since ?.
const revokedFamiliesQuery = `SELECT family_id FROM refresh_tokens WHERE revoked_at IS NOT NULL AND revoked_at >= ?`

// RevokedFamilies returns, each once and sorted, the families with a
// token revoked at or after since: one range scan of the partial index
// refresh_tokens_revoked_at_idx, which holds revoked tokens only. The
// rows are deduplicated and sorted here, not in SQL: with DISTINCT or
// ORDER BY, SQLite's planner may prefer walking the family index over the
// whole table.
func (s *RefreshStore) RevokedFamilies(ctx context.Context, since time.Time) (_ []string, err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	var rows []string
	err = s.db.NewRaw(revokedFamiliesQuery, timeArg(since)).Scan(ctx, &rows)
	if err != nil {
		return nil, dbError("read revoked families", err)
	}
	slices.Sort(rows)
	return slices.Compact(rows), nil
}

// PurgeRefresh removes at most limit records that expired before now,
// earliest expiry first, and returns how many it removed. A limit below 1
// removes nothing. On PostgreSQL replicas purging together take disjoint
// batches (SKIP LOCKED).
func (s *RefreshStore) PurgeRefresh(ctx context.Context, now time.Time, limit int) (_ int, err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	if limit < 1 {
		return 0, nil
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM refresh_tokens WHERE id IN (
		SELECT id FROM refresh_tokens WHERE expires_at < ? ORDER BY expires_at LIMIT ?`+skipLocked(s.db)+`)`,
		timeArg(now), limit)
	if err != nil {
		return 0, dbError("purge refresh tokens", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbError("purge refresh tokens", err)
	}
	return int(n), nil
}

// insertRefresh inserts one token row.
func insertRefresh(ctx context.Context, db bun.IDB, r domain.RefreshRecord) error {
	_, err := db.ExecContext(ctx, insertRefreshQuery,
		r.ID, r.FamilyID, r.UserID, timeArg(r.IssuedAt), timeArg(r.ExpiresAt), nullTimeArg(r.UsedAt), nullTimeArg(r.RevokedAt))
	return err
}
