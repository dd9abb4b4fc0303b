package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
)

// postgresEngine is PostgreSQL's Engine: its column types, its PL/pgSQL
// triggers, its locks and statements.
// PostgreSQL's writers lock rows, not the database, so replicas and
// concurrent writers meet on row, table and advisory locks.
type postgresEngine struct{ n Names }

// Times are timestamptz; text columns are declared COLLATE "C", so ORDER
// BY and the indexes compare bytes, as SQLite's BINARY collation and Go's
// string comparison do (docs/storage.md).
func (postgresEngine) TimeColumn() string         { return "timestamptz" }
func (postgresEngine) TextColumn() string         { return `text COLLATE "C"` }
func (postgresEngine) BytesColumn() string        { return "bytea" }
func (postgresEngine) WithoutRowID() string       { return "" }
func (postgresEngine) PositionFunction() string   { return "strpos" }
func (postgresEngine) ForUpdate() string          { return " FOR UPDATE" }
func (postgresEngine) SkipLocked() string         { return " FOR UPDATE SKIP LOCKED" }
func (postgresEngine) AbortsOnError() bool        { return true }
func (postgresEngine) BatchesCreates() bool       { return true }
func (postgresEngine) RetriesMigrationRace() bool { return true }
func (e postgresEngine) ChangeHead() ChangeHead   { return &pgWatermark{n: e.n} }
func (postgresEngine) Time(t time.Time) any       { return domain.Normalize(t) }

func (postgresEngine) SerialPrimaryKey() string {
	return "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
}

func (e postgresEngine) SerialRevision() string { return e.SerialPrimaryKey() }

// Prepares is false: a kept statement is session state, which a pooler in
// transaction mode cannot carry (prepared.go).
func (postgresEngine) Prepares() bool { return false }

// Placeholders rewrites the ? placeholders of q as $1, $2, …; q must have
// no ? other than placeholders.
func (postgresEngine) Placeholders(q string) string {
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (postgresEngine) TableExistsQuery() string {
	return `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?`
}

func (postgresEngine) ColumnExistsQuery() string {
	return "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?"
}

func (postgresEngine) AddColumnIfMissing(ctx context.Context, tx bun.Tx, table, column, typ string) error {
	_, err := tx.ExecContext(ctx, "ALTER TABLE ? ADD COLUMN IF NOT EXISTS ? "+typ, bun.Ident(table), bun.Ident(column))
	return err
}

// WithTriggersOff disables table's user triggers around fn.
func (postgresEngine) WithTriggersOff(ctx context.Context, tx bun.Tx, table string, fn func() error) error {
	if _, err := tx.ExecContext(ctx, "ALTER TABLE "+QuoteIdent(table)+" DISABLE TRIGGER USER"); err != nil {
		return fmt.Errorf("bunstore: disable the triggers of %s: %w", table, err)
	}
	if err := fn(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "ALTER TABLE "+QuoteIdent(table)+" ENABLE TRIGGER USER"); err != nil {
		return fmt.Errorf("bunstore: enable the triggers of %s: %w", table, err)
	}
	return nil
}

// DefineFold defines the fold as the SQL function name (bunstore's
// fold.go). Without STRICT the body is inlined, and NULL still gives NULL.
func (postgresEngine) DefineFold(ctx context.Context, db bun.IDB, name string) error {
	from, to := foldTable()
	_, err := db.ExecContext(ctx, "CREATE OR REPLACE FUNCTION "+name+"(text) RETURNS text "+
		"LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fold$ SELECT CASE WHEN octet_length($1) = length($1) "+
		`THEN lower($1 COLLATE "C") ELSE translate(lower($1 COLLATE "C"), ?, ?) END $fold$`, from, to)
	if err != nil {
		return fmt.Errorf("bunstore: define %s: %w", name, err)
	}
	return nil
}

// ChangesTriggerDDL returns the statements creating table's row trigger;
// changesFunction is the one function of every cache table.
func (e postgresEngine) ChangesTriggerDDL(table string) []string {
	return append([]string{e.changesFunction()}, pgTrigger(table, "changes", "AFTER INSERT OR UPDATE OR DELETE", "FOR EACH ROW", "cache_changes_record")...)
}

func (postgresEngine) ChangesTriggerDropDDL(table string) []string {
	return pgDropTriggers(table, "changes", "changes_removed")
}

// pgDropTriggers is dropTriggers of a PostgreSQL table, which names it.
func pgDropTriggers(table string, suffixes ...string) []string {
	out := dropTriggers(table, suffixes...)
	for i := range out {
		out[i] += " ON " + QuoteIdent(table)
	}
	return out
}

// pgTrigger returns the statements that replace table's trigger of
// suffix, which runs the function fn after events, for each row or
// statement (each, with its transition tables).
func pgTrigger(table, suffix, events, each, fn string) []string {
	return append(pgDropTriggers(table, suffix), "CREATE TRIGGER "+ObjectName(table, suffix)+" "+events+" ON "+QuoteIdent(table)+
		" "+each+" EXECUTE FUNCTION "+fn+"()")
}

// ChangesRemovedDDL records removals once per DELETE statement, from its
// transition table (see changesRemovedMigration).
func (e postgresEngine) ChangesRemovedDDL(table string) []string {
	return slices.Concat([]string{e.changesRemovedFunction()},
		pgTrigger(table, "changes", "AFTER INSERT OR UPDATE", "FOR EACH ROW", "cache_changes_record"),
		pgTrigger(table, "changes_removed", "AFTER DELETE", "REFERENCING OLD TABLE AS gone FOR EACH STATEMENT", "cache_changes_removed"))
}

func (e postgresEngine) ChangesRemovedDownDDL(table string) []string {
	return append(pgDropTriggers(table, "changes_removed"), e.ChangesTriggerDDL(table)...)
}

// UsageTableDDL defines the quota check (pgUsageAdmitFunction).
func (postgresEngine) UsageTableDDL() []string { return []string{pgUsageAdmitFunction} }

// UsageTriggerDDL returns the statement triggers that keep table's counts
// in cache_usage, from their transition tables.
func (e postgresEngine) UsageTriggerDDL(table string) []string {
	return slices.Concat([]string{e.usageAddedFunction(), e.usageChangedFunction(), e.usageRemovedFunction(),
		"DROP TRIGGER IF EXISTS " + ObjectName(table, "usage") + " ON " + QuoteIdent(table), "DROP FUNCTION IF EXISTS cache_usage_row()"},
		pgTrigger(table, "usage_added", "AFTER INSERT", "REFERENCING NEW TABLE AS added FOR EACH STATEMENT", "cache_usage_added"),
		pgTrigger(table, "usage_changed", "AFTER UPDATE", "REFERENCING OLD TABLE AS before NEW TABLE AS after FOR EACH STATEMENT", "cache_usage_changed"),
		pgTrigger(table, "usage_removed", "AFTER DELETE", "REFERENCING OLD TABLE AS gone FOR EACH STATEMENT", "cache_usage_removed"))
}

func (postgresEngine) UsageTriggerDropDDL(table string) []string {
	return pgDropTriggers(table, "usage_added", "usage_changed", "usage_removed")
}

// Guarded: the statement gets with as a prefix and from as its FROM item
// (a one-row CTE named quota).
func (postgresEngine) Guarded(entity string, g Guard) (with, from, where string, args []any) {
	return "WITH quota AS (SELECT 1 WHERE cache_usage_admit(?, ?, ?, ?, ?, ?)) ", "quota", "",
		[]any{entity, g.Assignee, g.Entries, g.Bytes, g.Quota.MaxEntries, g.Quota.MaxBytes}
}

// LockTableForWriters takes SHARE ROW EXCLUSIVE: it conflicts with itself
// and with writers, not with readers.
func (postgresEngine) LockTableForWriters(ctx context.Context, tx bun.Tx, table string) error {
	_, err := tx.ExecContext(ctx, "LOCK TABLE ? IN SHARE ROW EXCLUSIVE MODE", bun.Ident(table))
	return err
}

// LockMigrations takes the transaction-scoped advisory lock
// (pg_advisory_xact_lock) in a transaction kept open on a connection of its
// own while the migrations run on others; the returned function ends it,
// releasing the lock. A session lock would not do behind PgBouncer in
// transaction mode: the unlock could reach another backend.
func (postgresEngine) LockMigrations(ctx context.Context, db *bun.DB, key int64) (func(), error) {
	if db.Stats().MaxOpenConnections == 1 {
		return nil, errors.New("bunstore: Migrate on PostgreSQL needs a pool of at least two connections")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, dberr.Wrap("begin the migration lock's transaction", err)
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", key); err != nil {
		_ = tx.Rollback()
		return nil, dberr.Wrap("take the migration lock", err)
	}
	return func() { _ = tx.Rollback() }, nil
}

// LockThrottleKeys takes a transaction-scoped advisory lock per key, in
// sorted order (no deadlock between two reservations).
func (postgresEngine) LockThrottleKeys(ctx context.Context, tx bun.Tx, class int32, names []string) error {
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?, hashtext(?))", class, name); err != nil {
			return dberr.Wrap("lock a login throttle key", err)
		}
	}
	return nil
}

// PurgePlan, run in a purge's transaction before the statement, leaves
// the planner only index walks, of which the ordered one on the owner's
// expiry index is the cheapest: without statistics (a table just filled,
// autovacuum off) it would scan the table or build a bitmap of every
// expired row and sort it. Sorts stay allowed: the statement's triggers
// sort.
const PurgePlan = "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)"

// PurgeStatement chooses its batch FOR UPDATE SKIP LOCKED, so replicas
// purging together take disjoint rows and never wait for each other.
func (postgresEngine) PurgeStatement(table bun.Ident, now time.Time, limit int) (string, []any) {
	return "WITH deleted AS (SELECT id FROM ? WHERE date_deleted IS NOT NULL ORDER BY date_deleted LIMIT ? FOR UPDATE SKIP LOCKED), " +
			"expired AS (SELECT id FROM ? WHERE date_deleted IS NULL AND expires_at <= ? ORDER BY assignee_id, expires_at LIMIT ? FOR UPDATE SKIP LOCKED) " +
			"DELETE FROM ? WHERE id IN (SELECT id FROM deleted UNION ALL SELECT id FROM expired LIMIT ?)",
		[]any{table, limit, table, TimeArg(now), limit, table, limit}
}

// Purge runs purgeStatement with PurgePlan set for its transaction.
func (e postgresEngine) Purge(ctx context.Context, db bun.IDB, table bun.Ident, now time.Time, limit int) (int64, error) {
	query, args := e.PurgeStatement(table, now, limit)
	var n int64
	err := dberr.WithRetry(ctx, func() error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, PurgePlan); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, query, args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
	})
	return n, err
}

// BoundQuery bounds fn by the server's statement_timeout, set for a
// transaction of its own (SET LOCAL, so nothing stays on a connection that
// a pool such as PgBouncer passes on).
func (postgresEngine) BoundQuery(ctx context.Context, limit time.Duration, conn bun.Conn, fn func(ctx context.Context, db bun.IDB) error) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	ms := max(limit.Milliseconds(), 1)
	if _, err := tx.ExecContext(ctx, "SELECT set_config('statement_timeout', ?, true)", strconv.FormatInt(ms, 10)); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		var pg *pgconn.PgError
		if errors.As(err, &pg) && pg.Code == dberr.PGQueryCanceled && ctx.Err() == nil {
			return fmt.Errorf("%w: %w", domain.ErrQueryTooExpensive, err)
		}
		return err
	}
	return tx.Commit()
}

// Check refuses a read-only standby.
func (postgresEngine) Check(ctx context.Context, db *bun.DB) error {
	var readOnly string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('transaction_read_only')").Scan(&readOnly); err != nil {
		return dberr.Wrap("check the database", err)
	}
	if readOnly == "on" {
		return &dberr.Outage{Kind: domain.ErrDatabaseUnavailable, Cause: errors.New("the server is a read-only standby")}
	}
	return nil
}

// Backup refuses: PostgreSQL has its own tools.
func (postgresEngine) Backup(context.Context, *bun.DB, string) error {
	return errors.New("backup copies SQLite databases; for PostgreSQL use pg_dump or pg_basebackup")
}

// The PL/pgSQL of the change log and of the quota counts (bunstore's
// changes_schema.go and usage_schema.go).

// changesFunction is the one trigger function of every cache table on
// PostgreSQL; TG_TABLE_NAME names the entity.
func (e postgresEngine) changesFunction() string {
	return `CREATE OR REPLACE FUNCTION cache_changes_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	-- Held until the transaction ends: the feed's watermark (pgWatermark).
	PERFORM pg_advisory_xact_lock_shared(` + strconv.FormatInt(changesWriterLock, 10) + `);
	IF TG_OP = 'INSERT' THEN
		INSERT INTO ` + e.n.Changes + ` (` + e.n.ChangeColumns + `, at) VALUES (TG_TABLE_NAME, 'created',
			NEW.id, NEW.key, NEW.type, NEW.assignee_id, NEW.data, NEW.version,
			NEW.date_created, NEW.date_updated, NEW.date_deleted, NEW.expires_at, clock_timestamp());
	ELSIF TG_OP = 'UPDATE' THEN
		INSERT INTO ` + e.n.Changes + ` (` + e.n.ChangeColumns + `, at) VALUES (TG_TABLE_NAME,
			CASE WHEN OLD.date_deleted IS NULL AND NEW.date_deleted IS NOT NULL THEN 'deleted' ELSE 'updated' END,
			NEW.id, NEW.key, NEW.type, NEW.assignee_id, NEW.data, NEW.version,
			NEW.date_created, NEW.date_updated, NEW.date_deleted, NEW.expires_at, clock_timestamp());
	ELSIF OLD.date_deleted IS NULL THEN
		INSERT INTO ` + e.n.Changes + ` (` + e.n.ChangeColumns + `, at) VALUES (TG_TABLE_NAME,
			CASE WHEN OLD.expires_at IS NULL THEN 'deleted' ELSE 'expired' END,
			OLD.id, OLD.key, OLD.type, OLD.assignee_id, OLD.data, OLD.version,
			OLD.date_created, OLD.date_updated, COALESCE(OLD.expires_at, clock_timestamp()), OLD.expires_at, clock_timestamp());
	END IF;
	RETURN NULL;
END
$$`
}

// changesRemovedFunction records the rows one DELETE statement removed
// (the transition table gone) as cache_changes_record's DELETE branch
// does row by row: a row not deleted before expired (or, without an
// expiry, was deleted), and removing a soft-deleted row records nothing.
// It takes the feed's lock only when it records a row.
func (e postgresEngine) changesRemovedFunction() string {
	return `CREATE OR REPLACE FUNCTION cache_changes_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM gone WHERE date_deleted IS NULL) THEN
		-- Held until the transaction ends: the feed's watermark (pgWatermark).
		PERFORM pg_advisory_xact_lock_shared(` + strconv.FormatInt(changesWriterLock, 10) + `);
		INSERT INTO ` + e.n.Changes + ` (` + e.n.ChangeColumns + `, at)
		SELECT TG_TABLE_NAME, CASE WHEN expires_at IS NULL THEN 'deleted' ELSE 'expired' END,
			id, key, type, assignee_id, data, version,
			date_created, date_updated, COALESCE(expires_at, clock_timestamp()), expires_at, clock_timestamp()
		FROM gone WHERE date_deleted IS NULL;
	END IF;
	RETURN NULL;
END
$$`
}

// pgUsageAdmitFunction is the quota check of a write on PostgreSQL
// (Guarded): under the assignee's transaction-scoped advisory lock (class
// "quot"; a hash collision only makes two assignees wait for each other,
// and taking it writes nothing, where locking a row would), it sums the
// shards and returns whether the growth fits the limits (0: none). Being
// VOLATILE, it reads a fresh snapshot after the lock, so it sees every
// write committed before, including the previous holder's.
const pgUsageAdmitFunction = `CREATE OR REPLACE FUNCTION cache_usage_admit(p_entity text, p_assignee text,
		grow_entries bigint, grow_bytes bigint, max_entries bigint, max_bytes bigint) RETURNS boolean
		LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	n bigint;
	b bigint;
BEGIN
	PERFORM pg_advisory_xact_lock(` + quotaLockClass + `, hashtext(p_entity || '/' || p_assignee));
	SELECT coalesce(sum(entries), 0), coalesce(sum(bytes), 0) INTO n, b
	FROM cache_usage WHERE entity = p_entity AND assignee_id = p_assignee;
	IF grow_entries > 0 AND max_entries > 0 AND n + grow_entries > max_entries
			OR grow_bytes > 0 AND max_bytes > 0 AND b + grow_bytes > max_bytes THEN
		RETURN false;
	END IF;
	RETURN true;
END
$$`

// quotaLockClass is the first half of cache_usage_admit's two-key advisory
// locks ("quot"); the two-key space never meets Migrate's one-key lock, and
// the throttle's class differs.
const quotaLockClass = "1903521652"

// pgOwnShard is the shard of a change on PostgreSQL: its connection's.
const pgOwnShard = `1 + pg_backend_pid() % 15`

// UsageShard: the connection's shard.
func (postgresEngine) UsageShard() string { return pgOwnShard }

// RecountLocks locks tables in one statement, in the order given, which
// is the order writers take them, so no writer meets the recount in the
// other order.
func (postgresEngine) RecountLocks(tables ...string) []string {
	return []string{"LOCK TABLE " + strings.Join(tables, ", ") + " IN SHARE ROW EXCLUSIVE MODE"}
}

// usageFunction returns the trigger function name that counts what one
// statement changed (bunstore's usage_schema.go says what counts), from
// its transition tables by sel: one upsert per assignee, in assignee order.
// A row trigger would update one count row per written row: quadratic for
// an import of many rows of one assignee. Every inserted and updated row
// logs a change of the row as written, every removed row not deleted
// before one of the row as it was.
func (e postgresEngine) usageFunction(name, sel string) string {
	return `CREATE OR REPLACE FUNCTION ` + name + `() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO ` + e.n.Usage + ` AS u (entity, assignee_id, shard, entries, bytes)
	` + sel + `
	ON CONFLICT (entity, assignee_id, shard) DO UPDATE SET entries = u.entries + excluded.entries, bytes = u.bytes + excluded.bytes;
	RETURN NULL;
END
$$`
}

func (e postgresEngine) usageAddedFunction() string {
	return e.usageFunction("cache_usage_added", `SELECT TG_TABLE_NAME, assignee_id, `+pgOwnShard+`, count(*), sum(octet_length(data) + `+ChangeCost("added")+`) FROM added
	GROUP BY assignee_id ORDER BY assignee_id`)
}

func (e postgresEngine) usageChangedFunction() string {
	return e.usageFunction("cache_usage_changed", `SELECT TG_TABLE_NAME, assignee_id, `+pgOwnShard+`, sum(n), sum(b) FROM (
		SELECT assignee_id, -1 AS n, -octet_length(data)::bigint AS b FROM before
		UNION ALL
		SELECT assignee_id, 1, octet_length(data)::bigint + `+ChangeCost("after")+` FROM after
	) d GROUP BY assignee_id HAVING sum(n) <> 0 OR sum(b) <> 0 ORDER BY assignee_id`)
}

func (e postgresEngine) usageRemovedFunction() string {
	return e.usageFunction("cache_usage_removed", `SELECT TG_TABLE_NAME, assignee_id, `+pgOwnShard+`, -count(*),
		sum(-octet_length(data) + CASE WHEN date_deleted IS NULL THEN `+ChangeCost("gone")+` ELSE 0 END) FROM gone
	GROUP BY assignee_id ORDER BY assignee_id`)
}

// The instants a PostgreSQL timestamptz holds: 4713 BC (year -4712 as Go
// counts) to 294276 AD.
var (
	pgTimeMin = time.Date(-4712, time.November, 24, 0, 0, 0, 0, time.UTC)
	pgTimeMax = time.Date(294276, time.December, 31, 23, 59, 59, 999999000, time.UTC)
)

// appendPGTime writes tm, in UTC, as a timestamptz literal. A time before
// AD 1 is written with PostgreSQL's era ("0001-12-31 … BC" is Go's year 0):
// "0000-…" would be refused, and a request's bound (an audit since of
// 0001-01-01T00:00:00+23:59) would answer 500. A time outside what the type
// holds is clamped to its bounds, which keeps every comparison's answer.
func appendPGTime(b []byte, tm time.Time) []byte {
	switch {
	case tm.Before(pgTimeMin):
		tm = pgTimeMin
	case tm.After(pgTimeMax):
		tm = pgTimeMax
	}
	b = append(b, '\'')
	y := tm.Year()
	if y >= 1 {
		b = tm.AppendFormat(b, "2006-01-02 15:04:05.999999-07:00")
		return append(b, "'::timestamptz"...)
	}
	b = fmt.Appendf(b, "%04d", 1-y)
	b = tm.AppendFormat(b, "-01-02 15:04:05.999999-07:00")
	return append(b, " BC'::timestamptz"...)
}

// foldTable returns the non-ASCII characters that unicode.ToLower changes,
// and what it changes them to, in the same order.
func foldTable() (from, to string) {
	var f, t strings.Builder
	for r := rune(utf8RuneSelf); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l != r {
			f.WriteRune(r)
			t.WriteRune(l)
		}
	}
	return f.String(), t.String()
}

const utf8RuneSelf = 0x80

// pgWatermark is the state of the PostgreSQL head (see bunstore's
// ChangeLog).
type pgWatermark struct {
	n    Names
	mu   sync.Mutex
	safe int64 // the head: every revision up to it is settled
	// waiting is set while there is a candidate: revisions up to
	// pendingRev are settled once none of the writers in pendingWriters
	// holds the writers' lock.
	waiting        bool
	pendingRev     int64
	pendingWriters map[string]bool
}

// changesWriterLock is the advisory lock key every transaction writing the
// log holds, shared, from before it draws a revision until it ends; the
// bytes spell "cachechg".
const changesWriterLock int64 = 0x63616368_65636867

// lockHigh and lockLow are the halves pg_locks shows the key in.
const (
	lockHigh = uint32(uint64(changesWriterLock) >> 32)
	lockLow  = uint32(uint64(changesWriterLock) & 0xffffffff)
)

// read advances the watermark as far as it can and returns it.
func (w *pgWatermark) Read(ctx context.Context, db *bun.DB) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The sequence first, then the lock's holders: the order is what makes
	// the candidate sound.
	var (
		last     int64
		isCalled bool
	)
	err := dberr.WithRetry(ctx, func() error {
		return db.QueryRowContext(ctx, "SELECT last_value, is_called FROM "+w.n.ChangesSequence).Scan(&last, &isCalled)
	})
	if err != nil {
		return 0, dberr.Wrap("read the change log's sequence", err)
	}
	if !isCalled {
		last = 0
	}
	var holders sql.NullString
	err = dberr.WithRetry(ctx, func() error {
		return db.QueryRowContext(ctx, "SELECT string_agg(virtualtransaction, ',') FROM pg_locks "+
			"WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "+
			"AND classid = ? AND objid = ? AND objsubid = 1",
			lockHigh, lockLow).Scan(&holders)
	})
	if err != nil {
		return 0, dberr.Wrap("read the change log's writers", err)
	}
	writers := map[string]bool{}
	if holders.Valid {
		for _, v := range strings.Split(holders.String, ",") {
			writers[v] = true
		}
	}
	if w.waiting && !overlaps(w.pendingWriters, writers) {
		w.safe = max(w.safe, w.pendingRev)
		w.waiting = false
	}
	switch {
	case last <= w.safe:
	case len(writers) == 0:
		// No writer in flight: every drawn revision is settled now.
		w.safe, w.waiting = last, false
	case !w.waiting:
		w.waiting, w.pendingRev, w.pendingWriters = true, last, writers
	}
	return w.safe, nil
}

func (*pgWatermark) Trails() bool { return true }

func (w *pgWatermark) Pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waiting
}

func overlaps(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}
