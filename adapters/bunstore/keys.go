package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// KeyStore is the ports.KeyStore of the signing_keys table.
type KeyStore struct {
	db     *DB
	bounds bound.Bounds
}

var _ ports.KeyStore = (*KeyStore)(nil)

// NewKeyStore returns the store over db, which must come from Open and
// have been migrated.
func NewKeyStore(db *DB) *KeyStore {
	return &KeyStore{db: db, bounds: db.bounds}
}

// signingKeyRow is a row of signing_keys as read.
type signingKeyRow struct {
	ID          string          `bun:"id"`
	Algorithm   string          `bun:"algorithm"`
	Private     []byte          `bun:"private"`
	Public      []byte          `bun:"public"`
	DateCreated engine.NullTime `bun:"date_created"`
	SignsFrom   engine.NullTime `bun:"signs_from"`
	RetiredAt   engine.NullTime `bun:"retired_at"`
	RevokedAt   engine.NullTime `bun:"revoked_at"`
}

// toDomainSigningKey converts a row to the domain type.
func toDomainSigningKey(r signingKeyRow) domain.SigningKey {
	return domain.SigningKey{
		ID:          r.ID,
		Algorithm:   r.Algorithm,
		Private:     r.Private,
		Public:      r.Public,
		DateCreated: r.DateCreated.Time,
		SignsFrom:   r.SignsFrom.Time,
		RetiredAt:   r.RetiredAt.Ptr(),
		RevokedAt:   r.RevokedAt.Ptr(),
	}
}

// SigningKeys returns every stored key, newest DateCreated first (ties by
// descending id, so the order is total). A key stored before signs_from
// existed, or imported without it, signs from its creation.
func (s *KeyStore) SigningKeys(ctx context.Context) (_ []domain.SigningKey, err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	var rows []signingKeyRow
	err = s.db.sql.NewRaw(`SELECT id, algorithm, "private", "public", date_created,
		COALESCE(signs_from, date_created) AS signs_from, retired_at, revoked_at
		FROM signing_keys ORDER BY date_created DESC, id DESC`).Scan(ctx, &rows)
	if err != nil {
		return nil, dberr.Wrap("read signing keys", err)
	}
	keys := make([]domain.SigningKey, len(rows))
	for i, row := range rows {
		keys[i] = toDomainSigningKey(row)
	}
	return keys, nil
}

// AddSigningKey stores k and retires every key not retired by k's
// activation at that instant, erasing the private half of every key
// retired at or before k.DateCreated, in one transaction with the events;
// from its activation k is the one signing key (unless it came retired).
// Concurrent additions queue, so replicas generating a key at the same
// start never leave two signing keys. A key id already stored is an
// internal error and changes nothing.
func (s *KeyStore) AddSigningKey(ctx context.Context, k domain.SigningKey, events ...domain.AuditEvent) (err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	return authInTx(ctx, call, s.db, "add signing key", func(ctx context.Context, tx bun.Tx) error {
		if err := s.db.eng.LockTableForWriters(ctx, tx, "signing_keys"); err != nil {
			return dberr.Wrap("lock signing keys", err)
		}
		from := engine.TimeArg(k.Activation())
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retired_at = ?
			WHERE retired_at IS NULL OR retired_at > ?`, from, from); err != nil {
			return dberr.Wrap("retire signing keys", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET "private" = ?
			WHERE retired_at <= ? AND length("private") > 0`, []byte{}, engine.TimeArg(k.DateCreated)); err != nil {
			return dberr.Wrap("erase retired signing keys", err)
		}
		private := k.Private
		if k.RetiredAt != nil || k.RevokedAt != nil {
			private = nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO signing_keys
			(id, algorithm, "private", "public", date_created, signs_from, retired_at, revoked_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.Algorithm, authBytes(private), authBytes(k.Public), engine.TimeArg(k.DateCreated), from,
			engine.NullTimeArg(k.RetiredAt), engine.NullTimeArg(k.RevokedAt))
		if err != nil {
			return dberr.Wrap("add signing key", err)
		}
		return insertEvents(ctx, tx, events)
	})
}

// revokeKeyQuery revokes a key, keeping the time of an earlier
// revocation, and erases its private half.
const revokeKeyQuery = `UPDATE signing_keys SET revoked_at = COALESCE(revoked_at, ?), "private" = ? WHERE id = ?`

// unpublishKeyQuery undoes what adding a key published ahead did to the
// others, when that key (id, the first three arguments) is revoked before
// its activation (the fourth): the keys that were to retire at its
// activation take its retirement instead, none when it had none.
const unpublishKeyQuery = `UPDATE signing_keys
	SET retired_at = (SELECT k.retired_at FROM signing_keys k WHERE k.id = ?)
	WHERE id <> ? AND revoked_at IS NULL AND retired_at = (
		SELECT COALESCE(k.signs_from, k.date_created) FROM signing_keys k
		WHERE k.id = ? AND k.revoked_at IS NULL AND COALESCE(k.signs_from, k.date_created) > ?)`

// RevokeSigningKey marks kid revoked at now (a key revoked before keeps
// its time) and erases its private half; domain.ErrSigningKeyNotFound for
// an unknown kid. A key published ahead that does not sign yet at now is
// only withdrawn (unpublishKeyQuery). The revocation and the events are
// one transaction, queued behind a concurrent AddSigningKey.
func (s *KeyStore) RevokeSigningKey(ctx context.Context, kid string, now time.Time, events ...domain.AuditEvent) (err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	return authInTx(ctx, call, s.db, "revoke signing key", func(ctx context.Context, tx bun.Tx) error {
		if err := s.db.eng.LockTableForWriters(ctx, tx, "signing_keys"); err != nil {
			return dberr.Wrap("lock signing keys", err)
		}
		if _, err := tx.ExecContext(ctx, unpublishKeyQuery, kid, kid, kid, engine.TimeArg(now)); err != nil {
			return dberr.Wrap("revoke signing key", err)
		}
		res, err := tx.ExecContext(ctx, revokeKeyQuery, engine.TimeArg(now), []byte{}, kid)
		if err != nil {
			return dberr.Wrap("revoke signing key", err)
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return dberr.Wrap("revoke signing key", err)
		case n == 0:
			return domain.ErrSigningKeyNotFound
		}
		return insertEvents(ctx, tx, events)
	})
}

// SetSigningKeyPrivate replaces the private half of kid;
// domain.ErrSigningKeyNotFound for an unknown kid.
func (s *KeyStore) SetSigningKeyPrivate(ctx context.Context, kid string, private []byte) (err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	var n int64
	err = gated(ctx, call, s.db, func() (err error) {
		n, err = dberr.Exec(ctx, s.db.sql, `UPDATE signing_keys SET "private" = ? WHERE id = ?`, authBytes(private), kid)
		return err
	})
	switch {
	case err != nil:
		return dberr.Wrap("replace signing key", err)
	case n == 0:
		return domain.ErrSigningKeyNotFound
	}
	return nil
}

// DeleteSigningKeysRetiredBefore removes the keys retired before t and
// returns how many it removed. Current keys are never removed.
func (s *KeyStore) DeleteSigningKeysRetiredBefore(ctx context.Context, t time.Time) (_ int, err error) {
	ctx, call := s.bounds.Enter(ctx)
	defer call.Done(&err)
	return s.db.exec(ctx, call, "delete retired signing keys",
		"DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < ?", engine.TimeArg(t))
}

// authBytes returns b, or an empty slice for nil: Bun writes a nil slice
// as NULL, and the key columns hold bytes, possibly none.
func authBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
