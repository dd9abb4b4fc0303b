package bunstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Idempotency records (README, "Idempotent retries") live in one table
// per database, shared by every cache table and every replica, keyed by
// (scope, key): answer is the entry as its create made it, as JSON
// (idemAnswer) without its data, which data holds as sent; cost
// (domain.RecordBytes) counts in the quota of the entry's assignee in
// entity until the record is removed (usage_schema.go). Records written
// before cost existed hold their data in answer (base64) and count nothing.
//
// A create with a key writes its record first, then the entry, in one
// transaction (CreateIdempotent; on PostgreSQL outside the create batch).
// The record replaces only an expired record, so of two creates with one
// key the second finds the first's row (on PostgreSQL it waits at the
// primary key until the first ends).
const (
	idempotencyTable     = "cachegate_idempotency"
	idempotencyMigration = "20261203000100_idempotency_keys"
)

// idempotencyTableMigration returns the migration creating the table of
// idempotency records.
func idempotencyTableMigration(eng engine.Engine) migrate.Migration {
	return migrate.Migration{
		Name: idempotencyMigration,
		Up:   ddlMigration("create the idempotency records", idempotencyDDL(eng)...),
		Down: ddlMigration("drop the idempotency records", "DROP TABLE IF EXISTS "+idempotencyTable),
	}
}

// idempotencyDDL creates the table of idempotency records and the index
// the sweeper walks.
func idempotencyDDL(eng engine.Engine) []string {
	text, ts, without := eng.TextColumn(), eng.TimeColumn(), eng.WithoutRowID()
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
	// Data is empty in a record written with the data column; an older
	// record has it here, base64 (a []byte).
	Data        []byte     `json:"data,omitempty"`
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

// idempotencyKeptMigrationOf returns the migration giving each record the
// entity and assignee whose quota it counts in, and its cost.
func idempotencyKeptMigrationOf(eng engine.Engine) migrate.Migration {
	return migrate.Migration{
		Name: idempotencyKeptMigration,
		Up: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
			return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				text := eng.TextColumn() + " NOT NULL DEFAULT ''"
				for _, c := range []struct{ name, typ string }{
					{"entity", text}, {"assignee_id", text}, {"cost", "bigint NOT NULL DEFAULT 0"}, {"data", "TEXT NOT NULL DEFAULT ''"},
				} {
					if err := eng.AddColumnIfMissing(ctx, tx, idempotencyTable, c.name, c.typ); err != nil {
						return fmt.Errorf("bunstore: add %s.%s: %w", idempotencyTable, c.name, err)
					}
				}
				return nil
			})
		},
		Down: func(context.Context, *migrate.Migrator, *migrate.Migration) error { return nil },
	}
}

// keptRecord is what a removed record counted: cost bytes of assignee in
// entity.
type keptRecord struct {
	entity, assignee string
	cost             int64
}

// CreateIdempotent implements ports.CacheRepository. The record's cost
// counts in the quota with the entry's: the create must leave room for
// both, and the count is written after the entry, so that on PostgreSQL
// the assignee's quota lock comes before its count rows, as in every
// other write.
func (r *CacheRepository) CreateIdempotent(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota, rec ports.IdempotencyRecord) (err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	e = e.Normalized()
	a := toIdemAnswer(rec.Entry)
	data := string(a.Data)
	a.Data = nil
	answer, err := json.Marshal(a)
	if err != nil {
		return err
	}
	cost := domain.RecordBytes(rec.Scope, rec.Key, rec.Entry)
	if g := newQuotaGuard(q, nil, e); g != nil {
		g.Bytes += cost
		if err := r.refuseEarly(ctx, e, g, rec, now); err != nil {
			return err
		}
	}
	fn := func(ctx context.Context, db bun.IDB) error {
		expired, err := r.removeRecords(ctx, db, "scope = ? AND key = ? AND expires_at <= ?", rec.Scope, rec.Key, engine.TimeArg(now))
		if err != nil {
			return dberr.Wrap("replace the expired idempotency record", err)
		}
		n, err := dberr.Exec(ctx, db, "INSERT INTO "+idempotencyTable+
			" (scope, key, request_hash, entry_id, answer, created_at, expires_at, entity, assignee_id, cost, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"+
			" ON CONFLICT (scope, key) DO NOTHING",
			rec.Scope, rec.Key, rec.RequestHash, rec.Entry.ID, string(answer), engine.TimeArg(now), engine.TimeArg(rec.ExpiresAt),
			r.name, e.AssigneeID, cost, data)
		switch {
		case err != nil:
			return dberr.Wrap("store the idempotency record", err)
		case n == 0:
			return domain.ErrIdempotencyKeyInProgress
		}
		if err := r.create(ctx, db, e, now, q, cost); err != nil {
			return err
		}
		return r.countRecords(ctx, db, append(removed(expired), keptRecord{r.name, e.AssigneeID, cost}))
	}
	return r.writer.inTx(ctx, call, fn)
}

// refuseEarly returns the quota's refusal of an idempotent create that g
// cannot fit, read before anything is written: on PostgreSQL a refusal
// rolled back later leaves dead row versions as large as the data. On
// SQLite a create without a record (rec empty) whose assignee was refused
// lately is checked the same way (quota_early.go). It counts what removing
// the assignee's dead rows would give back, as the create would, and
// returns nil — its own statement decides — when the write fits after
// that, or when the key already has a record.
func (r *CacheRepository) refuseEarly(ctx context.Context, e domain.Entry, g *quotaGuard, rec ports.IdempotencyRecord, now time.Time) error {
	u, err := r.usage(ctx, r.db, g.Assignee)
	if err != nil {
		return err
	}
	if g.admit(u) == nil {
		return nil
	}
	var (
		dead, held int64
		grows      int64
	)
	err = dberr.WithRetry(ctx, func() error {
		return r.db.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(CASE WHEN date_deleted IS NOT NULL THEN -octet_length(data) "+
			"ELSE octet_length(key) + octet_length(type) + ? END), 0), "+
			"(SELECT count(*) FROM "+idempotencyTable+" WHERE scope = ? AND key = ? AND expires_at > ?) "+
			"FROM ? WHERE assignee_id = ? AND "+deadAt,
			domain.RetainedRowBytes, rec.Scope, rec.Key, engine.TimeArg(now), r.table, g.Assignee, engine.TimeArg(now)).Scan(&dead, &grows, &held)
	})
	if err != nil {
		return dberr.Wrap("check the assignee's quota", err)
	}
	refused := g.admit(domain.Usage{Entries: u.Entries - dead, Bytes: u.Bytes + grows})
	if refused == nil || held > 0 {
		return nil
	}
	return r.conflictOr(ctx, r.db, e, now, refused)
}

// removeRecords deletes the records where says and returns what they
// counted.
func (r *CacheRepository) removeRecords(ctx context.Context, db bun.IDB, where string, args ...any) ([]keptRecord, error) {
	var out []keptRecord
	err := dberr.WithRetry(ctx, func() error {
		rows, err := db.QueryContext(ctx, "DELETE FROM "+idempotencyTable+" WHERE "+where+" RETURNING entity, assignee_id, cost", args...)
		if err != nil {
			return err
		}
		out, err = scanAll(rows, func(s rowScanner) (k keptRecord, err error) {
			err = s.Scan(&k.entity, &k.assignee, &k.cost)
			return k, err
		})
		return err
	})
	return out, err
}

// removed returns records with their costs negated: what removing them
// takes off the counts.
func removed(records []keptRecord) []keptRecord {
	for i := range records {
		records[i].cost = -records[i].cost
	}
	return records
}

// countRecords adds the cost of each of records to its assignee's count,
// one upsert per entity and assignee in their order, as the triggers
// count.
func (r *CacheRepository) countRecords(ctx context.Context, db bun.IDB, records []keptRecord) error {
	sums := make(map[[2]string]int64)
	for _, k := range records {
		if k.entity != "" {
			sums[[2]string{k.entity, k.assignee}] += k.cost
		}
	}
	keys := slices.SortedFunc(maps.Keys(sums), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	})
	for _, k := range keys {
		if sums[k] == 0 {
			continue
		}
		if _, err := dberr.Exec(ctx, db, "INSERT INTO "+usageTable+" (entity, assignee_id, shard, entries, bytes) VALUES (?, ?, "+
			r.eng.UsageShard()+", 0, ?) ON CONFLICT (entity, assignee_id, shard) DO UPDATE SET bytes = "+usageTable+".bytes + excluded.bytes",
			k[0], k[1], sums[k]); err != nil {
			return dberr.Wrap("count the idempotency records", err)
		}
	}
	return nil
}

// insertIn is insert inside a savepoint when db is a PostgreSQL
// transaction (CreateIdempotent's): create answers a unique violation by
// clearing dead rows and trying again, which a transaction that a failed
// statement aborted could not do.
func (r *CacheRepository) insertIn(ctx context.Context, db bun.IDB, e domain.Entry, g *quotaGuard) (int64, error) {
	tx, ok := db.(bun.Tx)
	if !ok || !r.eng.AbortsOnError() {
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
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	var (
		rec     = ports.IdempotencyRecord{Scope: scope, Key: key}
		answer  string
		data    string
		expires engine.NullTime
	)
	err = dberr.WithRetry(ctx, func() error {
		return r.db.QueryRowContext(ctx, "SELECT request_hash, answer, expires_at, data FROM "+idempotencyTable+
			" WHERE scope = ? AND key = ? AND expires_at > ?", scope, key, engine.TimeArg(now)).Scan(&rec.RequestHash, &answer, &expires, &data)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ports.IdempotencyRecord{}, false, nil
	case err != nil:
		return ports.IdempotencyRecord{}, false, dberr.Wrap("read the idempotency record", err)
	}
	var a idemAnswer
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		return ports.IdempotencyRecord{}, false, dberr.Wrap("decode the idempotency record", err)
	}
	if len(a.Data) == 0 {
		a.Data = []byte(data)
	}
	rec.Entry, rec.ExpiresAt = a.entry(), expires.Time
	return rec, true, nil
}

// PurgeIdempotency implements ports.CacheRepository. It purges the
// database's one table of records, whichever cache table r serves; on
// PostgreSQL replicas purging at once skip each other's rows.
func (r *CacheRepository) PurgeIdempotency(ctx context.Context, now time.Time, limit int) (_ int, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	if limit <= 0 {
		return 0, nil
	}
	n := 0
	err = r.writer.inTx(ctx, call, func(ctx context.Context, db bun.IDB) error {
		gone, err := r.removeRecords(ctx, db, "(scope, key) IN (SELECT scope, key FROM "+idempotencyTable+
			" WHERE expires_at <= ? ORDER BY expires_at LIMIT ?"+r.eng.SkipLocked()+")", engine.TimeArg(now), limit)
		if err != nil {
			return err
		}
		n = len(gone)
		return r.countRecords(ctx, db, removed(gone))
	})
	if err != nil {
		return 0, dberr.Wrap("purge idempotency records", err)
	}
	return n, nil
}
