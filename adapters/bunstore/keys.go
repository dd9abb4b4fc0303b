package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// KeyStore is the ports.KeyStore of the signing_keys table.
type KeyStore struct {
	db     *bun.DB
	bounds bounds
}

var _ ports.KeyStore = (*KeyStore)(nil)

// NewKeyStore returns the store over db, which must come from Open and
// have been migrated.
func NewKeyStore(db *bun.DB, opts ...RepoOption) *KeyStore {
	return &KeyStore{db: db, bounds: newBounds(opts)}
}

// signingKeyRow is a row of signing_keys as read.
type signingKeyRow struct {
	ID          string   `bun:"id"`
	Algorithm   string   `bun:"algorithm"`
	Private     []byte   `bun:"private"`
	Public      []byte   `bun:"public"`
	DateCreated nullTime `bun:"date_created"`
	RetiredAt   nullTime `bun:"retired_at"`
	RevokedAt   nullTime `bun:"revoked_at"`
}

// toDomainSigningKey converts a row to the domain type.
func toDomainSigningKey(r signingKeyRow) domain.SigningKey {
	return domain.SigningKey{
		ID:          r.ID,
		Algorithm:   r.Algorithm,
		Private:     r.Private,
		Public:      r.Public,
		DateCreated: r.DateCreated.Time,
		RetiredAt:   r.RetiredAt.Ptr(),
		RevokedAt:   r.RevokedAt.Ptr(),
	}
}

// SigningKeys returns every stored key, newest DateCreated first (ties by
// descending id, so the order is total).
func (s *KeyStore) SigningKeys(ctx context.Context) (_ []domain.SigningKey, err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	var rows []signingKeyRow
	err = s.db.NewRaw(`SELECT id, algorithm, "private", "public", date_created, retired_at, revoked_at
		FROM signing_keys ORDER BY date_created DESC, id DESC`).Scan(ctx, &rows)
	if err != nil {
		return nil, dbError("read signing keys", err)
	}
	keys := make([]domain.SigningKey, len(rows))
	for i, row := range rows {
		keys[i] = toDomainSigningKey(row)
	}
	return keys, nil
}

// AddSigningKey stores k and retires every key not yet retired at
// k.DateCreated, erasing the private half of every retired key, in one
// transaction; afterwards k is the one current key
// (unless it came retired). Concurrent additions queue (a table lock on
// PostgreSQL, the write lock on SQLite), so replicas generating a key at
// the same start never leave two current keys: the last to commit wins. A
// key id already stored is an internal error and changes nothing. The
// events are inserted into auth_events in the same transaction.
func (s *KeyStore) AddSigningKey(ctx context.Context, k domain.SigningKey, events ...domain.AuditEvent) (err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	return authInTx(ctx, s.db, "add signing key", func(ctx context.Context, tx bun.Tx) error {
		if err := lockTableForWriters(ctx, tx, "signing_keys"); err != nil {
			return dbError("lock signing keys", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retired_at = COALESCE(retired_at, ?), "private" = ?
			WHERE retired_at IS NULL OR length("private") > 0`, timeArg(k.DateCreated), []byte{}); err != nil {
			return dbError("retire signing keys", err)
		}
		private := k.Private
		if k.RetiredAt != nil || k.RevokedAt != nil {
			private = nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO signing_keys
			(id, algorithm, "private", "public", date_created, retired_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.Algorithm, authBytes(private), authBytes(k.Public), timeArg(k.DateCreated),
			nullTimeArg(k.RetiredAt), nullTimeArg(k.RevokedAt))
		if err != nil {
			return dbError("add signing key", err)
		}
		return insertEvents(ctx, tx, events)
	})
}

// revokeKeyQuery revokes a key, keeping the time of an earlier
// revocation, and erases its private half.
const revokeKeyQuery = `UPDATE signing_keys SET revoked_at = COALESCE(revoked_at, ?), "private" = ? WHERE id = ?`

// RevokeSigningKey marks kid revoked at now (a key revoked before keeps
// its time) and erases its private half; domain.ErrSigningKeyNotFound for
// an unknown kid. With events, the revocation and the events' rows in
// auth_events are one transaction (an unknown kid stores neither).
func (s *KeyStore) RevokeSigningKey(ctx context.Context, kid string, now time.Time, events ...domain.AuditEvent) (err error) {
	if len(events) == 0 {
		return s.updateKey(ctx, "revoke signing key", revokeKeyQuery, timeArg(now), []byte{}, kid)
	}
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	return authInTx(ctx, s.db, "revoke signing key", func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.ExecContext(ctx, revokeKeyQuery, timeArg(now), []byte{}, kid)
		if err != nil {
			return dbError("revoke signing key", err)
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return dbError("revoke signing key", err)
		case n == 0:
			return domain.ErrSigningKeyNotFound
		}
		return insertEvents(ctx, tx, events)
	})
}

// SetSigningKeyPrivate replaces the private half of kid;
// domain.ErrSigningKeyNotFound for an unknown kid.
func (s *KeyStore) SetSigningKeyPrivate(ctx context.Context, kid string, private []byte) error {
	return s.updateKey(ctx, "replace signing key", `UPDATE signing_keys SET "private" = ? WHERE id = ?`,
		authBytes(private), kid)
}

// updateKey runs an UPDATE of one key; no row matched is
// domain.ErrSigningKeyNotFound.
func (s *KeyStore) updateKey(ctx context.Context, op, query string, args ...any) (err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	var n int64
	err = withRetry(ctx, func() error {
		res, err := s.db.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	switch {
	case err != nil:
		return dbError(op, err)
	case n == 0:
		return domain.ErrSigningKeyNotFound
	}
	return nil
}

// DeleteSigningKeysRetiredBefore removes the keys retired before t and
// returns how many it removed. Current keys are never removed.
func (s *KeyStore) DeleteSigningKeysRetiredBefore(ctx context.Context, t time.Time) (_ int, err error) {
	ctx, done := s.bounds.enter(ctx)
	defer done(&err)
	res, err := s.db.ExecContext(ctx, "DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < ?", timeArg(t))
	if err != nil {
		return 0, dbError("delete retired signing keys", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbError("delete retired signing keys", err)
	}
	return int(n), nil
}

// authBytes returns b, or an empty slice for nil: Bun writes a nil slice
// as NULL, and the key columns hold bytes, possibly none.
func authBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
