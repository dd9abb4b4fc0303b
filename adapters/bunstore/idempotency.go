package bunstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Idempotency records (README, "Idempotent retries") live in one table
// per database, shared by every cache table and every replica:
//
//   - cachegate_idempotency (scope, key, request_hash, entry_id, answer,
//     created_at, expires_at), primary key (scope, key): answer is the
//     entry as its create made it, as JSON (idemAnswer).
//
// A create with a key writes its record first, then the entry, in one
// transaction (CreateIdempotent): on PostgreSQL a transaction of its own,
// outside the create batch (create_batch.go), whose sharing of one INSERT
// between creates would not fit a second table; on SQLite one write of the
// handle's write group (write_group.go), whose savepoint holds both. The
// record is an upsert that replaces only an expired record, so of two
// creates with one key the second finds the first's row: on PostgreSQL it
// waits at the primary key until the first ends, and writes nothing if
// the first committed; on SQLite the one writer has already committed it.
const (
	idempotencyTable     = "cachegate_idempotency"
	idempotencyMigration = "20261203000100_idempotency_keys"
)

// idempotencyTableMigration returns the migration creating the table of
// idempotency records.
func idempotencyTableMigration() migrate.Migration {
	return migrate.Migration{
		Name: idempotencyMigration,
		Up:   ddlMigration("create the idempotency records", idempotencyDDL),
		Down: ddlMigration("drop the idempotency records", func(bun.IDB) []string {
			return []string{"DROP TABLE IF EXISTS " + idempotencyTable}
		}),
	}
}

// idempotencyDDL creates the table of idempotency records and the index
// the sweeper walks.
func idempotencyDDL(db bun.IDB) []string {
	text, ts, without := textColumnType(db), timeColumnType(db), engineOf(db).withoutRowID()
	return []string{
		"CREATE TABLE IF NOT EXISTS " + idempotencyTable + " (" +
			"scope " + text + " NOT NULL, key " + text + " NOT NULL, request_hash " + text + " NOT NULL, " +
			"entry_id " + text + " NOT NULL, answer " + text + " NOT NULL, " +
			"created_at " + ts + " NOT NULL, expires_at " + ts + " NOT NULL, " +
			"PRIMARY KEY (scope, key))" + without,
		"CREATE INDEX IF NOT EXISTS " + idempotencyTable + "_expires_idx ON " + idempotencyTable + " (expires_at)",
	}
}

// idemAnswer is the JSON form of a record's entry.
type idemAnswer struct {
	ID         string `json:"id"`
	Key        string `json:"key"`
	Type       string `json:"type"`
	AssigneeID string `json:"assigneeId"`
	// Data is base64 (a []byte), so its bytes come back exactly as
	// stored, whatever they are.
	Data        []byte     `json:"data"`
	Version     int        `json:"version"`
	DateCreated time.Time  `json:"dateCreated"`
	DateUpdated time.Time  `json:"dateUpdated"`
	DateDeleted *time.Time `json:"dateDeleted,omitempty"`
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
}

func toIdemAnswer(e domain.Entry) idemAnswer {
	e = e.Normalized()
	return idemAnswer{ID: e.ID, Key: e.Key, Type: e.Type, AssigneeID: e.AssigneeID, Data: e.Data,
		Version: e.Version, DateCreated: e.DateCreated, DateUpdated: e.DateUpdated,
		DateDeleted: e.DateDeleted, ExpiresAt: e.ExpiresAt}
}

func (a idemAnswer) entry() domain.Entry {
	return domain.Entry{ID: a.ID, Key: a.Key, Type: a.Type, AssigneeID: a.AssigneeID, Data: a.Data,
		Version: a.Version, DateCreated: a.DateCreated, DateUpdated: a.DateUpdated,
		DateDeleted: a.DateDeleted, ExpiresAt: a.ExpiresAt}.Normalized()
}

// CreateIdempotent implements ports.CacheRepository.
func (r *CacheRepository) CreateIdempotent(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota, rec ports.IdempotencyRecord) (err error) {
	ctx, done := r.bounds.enter(ctx)
	defer done(&err)
	e = e.Normalized()
	answer, err := json.Marshal(toIdemAnswer(rec.Entry))
	if err != nil {
		return err
	}
	fn := func(ctx context.Context, db bun.IDB) error {
		n, err := r.exec(ctx, db, "INSERT INTO "+idempotencyTable+
			" (scope, key, request_hash, entry_id, answer, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)"+
			" ON CONFLICT (scope, key) DO UPDATE SET request_hash = excluded.request_hash, entry_id = excluded.entry_id,"+
			" answer = excluded.answer, created_at = excluded.created_at, expires_at = excluded.expires_at"+
			" WHERE "+idempotencyTable+".expires_at <= ?",
			rec.Scope, rec.Key, rec.RequestHash, rec.Entry.ID, string(answer), timeArg(now), timeArg(rec.ExpiresAt), timeArg(now))
		switch {
		case err != nil:
			return dbError("store the idempotency record", err)
		case n == 0:
			return domain.ErrIdempotencyKeyInProgress
		}
		return r.create(ctx, db, e, now, q)
	}
	return r.writer.inTx(ctx, fn)
}

// insertIn is insert inside a savepoint when db is a PostgreSQL
// transaction (CreateIdempotent's): create answers a unique violation by
// clearing dead rows and trying again, which a transaction that a failed
// statement aborted could not do.
func (r *CacheRepository) insertIn(ctx context.Context, db bun.IDB, e domain.Entry, g *quotaGuard) (int64, error) {
	tx, ok := db.(bun.Tx)
	if !ok || !r.eng.abortsOnError() {
		return r.insert(ctx, db, e, g)
	}
	if _, err := tx.ExecContext(ctx, "SAVEPOINT cachegate_insert"); err != nil {
		return 0, err
	}
	n, err := r.insert(ctx, db, e, g)
	if err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT cachegate_insert"); rerr != nil {
			return 0, errors.Join(err, rerr)
		}
		return 0, err
	}
	_, err = tx.ExecContext(ctx, "RELEASE SAVEPOINT cachegate_insert")
	return n, err
}

// IdempotencyRecord implements ports.CacheRepository.
func (r *CacheRepository) IdempotencyRecord(ctx context.Context, scope, key string, now time.Time) (_ ports.IdempotencyRecord, _ bool, err error) {
	ctx, done := r.bounds.enter(ctx)
	defer done(&err)
	var (
		rec     = ports.IdempotencyRecord{Scope: scope, Key: key}
		answer  string
		expires nullTime
	)
	err = withRetry(ctx, func() error {
		return r.db.QueryRowContext(ctx, "SELECT request_hash, answer, expires_at FROM "+idempotencyTable+
			" WHERE scope = ? AND key = ? AND expires_at > ?", scope, key, timeArg(now)).Scan(&rec.RequestHash, &answer, &expires)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ports.IdempotencyRecord{}, false, nil
	case err != nil:
		return ports.IdempotencyRecord{}, false, dbError("read the idempotency record", err)
	}
	var a idemAnswer
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		return ports.IdempotencyRecord{}, false, dbError("decode the idempotency record", err)
	}
	rec.Entry, rec.ExpiresAt = a.entry(), expires.Time
	return rec, true, nil
}

// PurgeIdempotency implements ports.CacheRepository. It purges the
// database's one table of records, whichever cache table r serves; on
// PostgreSQL replicas purging at once skip each other's rows.
func (r *CacheRepository) PurgeIdempotency(ctx context.Context, now time.Time, limit int) (_ int, err error) {
	ctx, done := r.bounds.enter(ctx)
	defer done(&err)
	if limit <= 0 {
		return 0, nil
	}
	lock := r.eng.skipLocked()
	n, err := r.exec(ctx, r.db, "DELETE FROM "+idempotencyTable+" WHERE (scope, key) IN (SELECT scope, key FROM "+
		idempotencyTable+" WHERE expires_at <= ? ORDER BY expires_at LIMIT ?"+lock+")", timeArg(now), limit)
	if err != nil {
		return 0, dbError("purge idempotency records", err)
	}
	return int(n), nil
}
