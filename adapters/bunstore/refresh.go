package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// RefreshStore is the ports.RefreshStore of the refresh_families table:
// one row per family (refresh_schema.go).
type RefreshStore struct {
	db     *DB
	bounds bound.Bounds
	// rotation holds the statement of RotateRefresh's rotation.
	rotation *engine.Prepared
	// group is the SQLite rotation group (rotation_group.go), nil
	// elsewhere.
	group *batch.Batcher[*rotation]
}

var (
	_ ports.RefreshStore   = (*RefreshStore)(nil)
	_ ports.RevocationFeed = (*RefreshStore)(nil)
)

// For implements ports.RefreshStore (CacheRepository.For); the rotation
// group stays s's: a grouped rotation takes no place of its caller's.
func (s *RefreshStore) For(caller domain.Caller) ports.RefreshStore {
	v := *s
	v.bounds.Caller = caller
	return &v
}

// NewRefreshStore returns the store over db, which must come from Open and
// have been migrated.
func NewRefreshStore(db *DB) *RefreshStore {
	s := &RefreshStore{db: db, bounds: db.bounds, rotation: engine.NewPrepared(db.sql, db.eng, []string{rotateVerified: rotateQuery, rotateDigest: rotateDigestQuery}...)}
	if gate := db.gate; gate != nil {
		s.group = newRotationGroup(s, gate)
	}
	return s
}

// rotateQuery replaces a family's live token in place, when the presented
// token is the live one of an unrevoked, unexpired family of the user:
// the live token becomes prev (first used now), prev becomes prev2. SET
// expressions read the row as it was before the statement, on SQLite and
// PostgreSQL alike. Arguments: now, next id, next digest, next issued,
// next expires, next address, next user agent, family, presented id,
// user, now. rotateDigestQuery is the same for claims read unchecked
// (domain.Claims.Digest), with their digest as one more argument: only the
// live token's exact string matches it.
const (
	rotateQuery = `UPDATE refresh_families SET
		prev2_id = prev_id, prev2_used_at = prev_used_at, prev_id = current_id, prev_used_at = ?,
		current_id = ?, current_digest = ?, issued_at = ?, expires_at = ?, generation = generation + 1, address = ?, user_agent = ?
	WHERE family_id = ? AND current_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?`
	rotateDigestQuery = rotateQuery + ` AND current_digest = ?`
)

// The statements of RefreshStore.rotation, by index.
const (
	rotateVerified = iota
	rotateDigest
)

// familyColumns are the columns readFamily scans, in scanFamily's order.
const familyColumns = `family_id, user_id, current_id, issued_at, expires_at, generation,
	prev_id, prev_used_at, prev2_id, prev2_used_at, revoked_at, created_at, address, user_agent, current_digest`

// SaveRefresh starts r's family with r as its live token; a family already
// stored is an internal error.
func (s *RefreshStore) SaveRefresh(ctx context.Context, r domain.RefreshRecord) (err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	err = gated(ctx, call, s.db, func() error {
		_, err := insertFamilies(ctx, s.db.sql, false, []domain.RefreshFamily{domain.NewRefreshFamily(r)})
		return err
	})
	if err != nil {
		return dberr.Wrap("save refresh token", err)
	}
	return nil
}

// RotateRefresh judges the presented token against its family and acts
// on the verdict (domain.RefreshFamily.Judge, ports.RefreshStore). The
// rotation itself is one conditional UPDATE of the family's row (where
// current_id is the presented id), so of concurrent rotations of one token
// at most one stores a successor. A rotation that matched nothing reads
// the row and judges: within grace it returns the live token the read
// found; reuse revokes the family and stores events in one transaction,
// judged again under the row's lock. On SQLite rotations waiting for the
// write gate are committed in groups (rotation_group.go).
func (s *RefreshStore) RotateRefresh(ctx context.Context, presented domain.Claims, next domain.RefreshRecord, now time.Time, grace time.Duration,
	events ...domain.AuditEvent) (_ ports.Rotation, err error) {
	if next.FamilyID != presented.FamilyID || next.UserID != presented.Subject || next.ID == presented.ID {
		return ports.Rotation{}, errors.New("bunstore: rotate refresh token: the successor must keep the family and user of the token it replaces, with a new id")
	}
	r := &rotation{presented: presented, next: next, now: domain.Normalize(now), grace: grace, events: events}
	if s.group != nil {
		// The group's waiters take no place (bound.Bounds.EnterGrouped).
		ctx, call := s.bounds.EnterGrouped(ctx)
		defer call.Done(&err)
		r.call = call
		if err = s.group.Do(ctx, r); err != nil {
			return ports.Rotation{}, err
		}
		return r.answer, nil
	}
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	return s.rotateAlone(ctx, call, r)
}

// rotateAlone is RotateRefresh without a group: the UPDATE as a statement
// of its own, then, when it matched nothing, the verdict.
func (s *RefreshStore) rotateAlone(ctx context.Context, call *bound.Call, r *rotation) (ports.Rotation, error) {
	q, args := s.rotateStatement(r)
	res, err := s.rotation.ExecDB(ctx, q, args...)
	if a, done, err := rotatedBy(res, err, r); done {
		return a, err
	}
	f, found, err := readFamily(ctx, s.db.eng, s.db.sql, r.presented.FamilyID, false)
	if err != nil {
		return ports.Rotation{}, err
	}
	if v := judge(f, found, r); v != domain.RefreshReused {
		return answer(f, v), nil
	}
	var a ports.Rotation
	err = authInTx(ctx, call, s.db, "revoke a reused refresh family", func(ctx context.Context, tx bun.Tx) (err error) {
		a, err = s.judgeIn(ctx, tx, r)
		return err
	})
	return a, err
}

// rotateIn runs one rotation in tx: the UPDATE, and when it matched
// nothing, the verdict (judgeIn). An error is a failure, after which tx
// must roll back; any outcome commits.
func (s *RefreshStore) rotateIn(ctx context.Context, tx bun.Tx, r *rotation) (ports.Rotation, error) {
	q, args := s.rotateStatement(r)
	res, err := s.rotation.Exec(ctx, tx, q, args...)
	if a, done, err := rotatedBy(res, err, r); done {
		return a, err
	}
	return s.judgeIn(ctx, tx, r)
}

// rotatedBy is the answer of r's rotation UPDATE, which gave res or err,
// when it decides one (done): a failure, the rotation, or unproven claims
// that matched nothing.
func rotatedBy(res sql.Result, err error, r *rotation) (_ ports.Rotation, done bool, _ error) {
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	switch {
	case err != nil:
		return ports.Rotation{}, true, dberr.Wrap("rotate refresh token", err)
	case n == 1:
		return rotated(r.next), true, nil
	case !r.presented.Digest.IsZero():
		return ports.Rotation{Outcome: domain.RefreshUnproven}, true, nil
	}
	return ports.Rotation{}, false, nil
}

// judgeIn reads the presented token's family in tx (locking its row on
// PostgreSQL) and acts on the verdict: on reuse it revokes the family and
// appends r's events, both in tx.
func (s *RefreshStore) judgeIn(ctx context.Context, tx bun.Tx, r *rotation) (ports.Rotation, error) {
	f, found, err := readFamily(ctx, s.db.eng, tx, r.presented.FamilyID, true)
	if err != nil {
		return ports.Rotation{}, err
	}
	v := judge(f, found, r)
	if v != domain.RefreshReused {
		return answer(f, v), nil
	}
	if err := revokeIn(ctx, tx, "family_id", f.ID, r.now); err != nil {
		return ports.Rotation{}, err
	}
	if err := insertEvents(ctx, tx, r.events); err != nil {
		return ports.Rotation{}, err
	}
	return ports.Rotation{Outcome: v}, nil
}

// judge is the verdict on r's presented token for its family, refused
// when the family is not stored.
func judge(f domain.RefreshFamily, found bool, r *rotation) domain.RefreshVerdict {
	if !found {
		return domain.RefreshRefused
	}
	return f.Judge(r.presented, r.now, r.grace)
}

// answer is the answer to a rotation that matched nothing, for every
// verdict but reuse: within grace the family's live token; otherwise
// refused (a Rotate verdict here means the row changed between the UPDATE
// and the read: refusing is the safe answer).
func answer(f domain.RefreshFamily, v domain.RefreshVerdict) ports.Rotation {
	if v == domain.RefreshReissue {
		return ports.Rotation{Outcome: v, Record: f.Current()}
	}
	return ports.Rotation{Outcome: domain.RefreshRefused}
}

// rotateStatement returns the statement that rotates r (its index in
// s.rotation) with its arguments: rotateDigestQuery for claims read
// unchecked, else rotateQuery.
func (s *RefreshStore) rotateStatement(r *rotation) (int, []any) {
	now := s.db.eng.Time(r.now)
	args := []any{now, r.next.ID, digestArg(r.next.Digest), s.db.eng.Time(r.next.IssuedAt), s.db.eng.Time(r.next.ExpiresAt),
		r.next.Address, domain.CutUserAgent(r.next.UserAgent), r.presented.FamilyID, r.presented.ID, r.presented.Subject, now}
	if !r.presented.Digest.IsZero() {
		return rotateDigest, append(args, r.presented.Digest[:])
	}
	return rotateVerified, args
}

// digestArg is d as a statement argument: NULL when zero.
func digestArg(d domain.Digest) any {
	if d.IsZero() {
		return nil
	}
	return d[:]
}

// rotated is the answer of a successful rotation: next as stored.
func rotated(next domain.RefreshRecord) ports.Rotation {
	next.IssuedAt, next.ExpiresAt = domain.Normalize(next.IssuedAt), domain.Normalize(next.ExpiresAt)
	next.UsedAt, next.RevokedAt = nil, nil
	return ports.Rotation{Outcome: domain.RefreshRotate, Record: next}
}

// readFamily reads a family's row; found is false when there is none.
// With lock, the row stays locked until db's transaction ends
// (PostgreSQL; SQLite's IMMEDIATE transactions hold the database).
func readFamily(ctx context.Context, eng engine.Engine, db bun.IDB, familyID string, lock bool) (f domain.RefreshFamily, found bool, err error) {
	q := `SELECT ` + familyColumns + ` FROM refresh_families WHERE family_id = ?`
	if lock {
		q += eng.ForUpdate()
	}
	f, err = scanFamily(db.QueryRowContext(ctx, q, familyID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.RefreshFamily{}, false, nil
	case err != nil:
		return domain.RefreshFamily{}, false, dberr.Wrap("read refresh family", err)
	}
	return f, true, nil
}

// scanFamily scans the familyColumns of a row.
func scanFamily(row rowScanner) (domain.RefreshFamily, error) {
	var (
		f                                  domain.RefreshFamily
		issued, expires, used1, used2, rev engine.NullTime
		created                            engine.NullTime
		prev, prev2                        sql.NullString
		digest                             []byte
	)
	if err := row.Scan(&f.ID, &f.UserID, &f.CurrentID, &issued, &expires, &f.Generation,
		&prev, &used1, &prev2, &used2, &rev, &created, &f.Address, &f.UserAgent, &digest); err != nil {
		return domain.RefreshFamily{}, err
	}
	f.IssuedAt, f.ExpiresAt, f.RevokedAt, f.Created = issued.Time, expires.Time, rev.Ptr(), created.Time
	if len(digest) == len(f.CurrentDigest) {
		f.CurrentDigest = domain.Digest(digest)
	}
	for _, u := range []struct {
		id sql.NullString
		at engine.NullTime
	}{{prev, used1}, {prev2, used2}} {
		if u.id.Valid && u.at.Valid {
			f.Used = append(f.Used, domain.UsedRefresh{ID: u.id.String, UsedAt: u.at.Time})
		}
	}
	return f, nil
}

// insertFamilies inserts families in one statement and returns how many
// rows it inserted; with skipTaken a family already stored is kept.
func insertFamilies(ctx context.Context, db bun.IDB, skipTaken bool, fs []domain.RefreshFamily) (int, error) {
	if len(fs) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 15*len(fs))
	for _, f := range fs {
		used := make([]any, 0, 2*domain.RefreshKept)
		for k := range domain.RefreshKept {
			if k < len(f.Used) {
				used = append(used, f.Used[k].ID, engine.TimeArg(f.Used[k].UsedAt))
			} else {
				used = append(used, nil, nil)
			}
		}
		args = append(args, f.ID, f.UserID, f.CurrentID, engine.TimeArg(f.IssuedAt), engine.TimeArg(f.ExpiresAt), f.Generation)
		var created *time.Time
		if !f.Created.IsZero() {
			created = &f.Created
		}
		args = append(append(args, used...), engine.NullTimeArg(f.RevokedAt), engine.NullTimeArg(created), f.Address, domain.CutUserAgent(f.UserAgent),
			digestArg(f.CurrentDigest))
	}
	res, err := db.ExecContext(ctx, valuesStatement(`INSERT INTO refresh_families (`+familyColumns+`)`, 15, len(fs), skipTaken), args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("count the families inserted: %w", err)
	}
	return int(n), nil
}

// valuesStatement is head followed by n rows of width placeholders; with
// skipTaken, a row in conflict with one already stored is skipped.
func valuesStatement(head string, width, n int, skipTaken bool) string {
	row := "(" + placeholders(width) + ")"
	q := head + " VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	if skipTaken {
		q += " ON CONFLICT DO NOTHING"
	}
	return q
}

// revokeIn is revoke inside tx.
func revokeIn(ctx context.Context, tx bun.Tx, column, value string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, revokeQuery, engine.TimeArg(now), bun.Ident(column), value); err != nil {
		return dberr.Wrap("revoke refresh families", err)
	}
	return nil
}

const revokeQuery = `UPDATE refresh_families SET revoked_at = ? WHERE ? = ? AND revoked_at IS NULL`
