package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"modernc.org/sqlite"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
)

// sqliteEngine is SQLite's Engine: its column types, its triggers, its
// statements. SQLite has one writer at a time (internal/writegate), so it
// needs no row, table or advisory lock: its IMMEDIATE transactions already
// hold the whole database.
type sqliteEngine struct{ n Names }

// Times are INTEGER microseconds since the Unix epoch (UTC): an integer
// compares correctly, indexes well and round-trips exactly the
// microsecond precision domain.Normalize keeps (docs/storage.md).
func (sqliteEngine) TimeColumn() string           { return "INTEGER" }
func (sqliteEngine) TextColumn() string           { return "TEXT" }
func (sqliteEngine) BytesColumn() string          { return "BLOB" }
func (sqliteEngine) SerialPrimaryKey() string     { return "INTEGER PRIMARY KEY" }
func (sqliteEngine) SerialRevision() string       { return "INTEGER PRIMARY KEY AUTOINCREMENT" }
func (sqliteEngine) WithoutRowID() string         { return " WITHOUT ROWID" }
func (sqliteEngine) PositionFunction() string     { return "instr" }
func (sqliteEngine) ForUpdate() string            { return "" }
func (sqliteEngine) SkipLocked() string           { return "" }
func (sqliteEngine) AbortsOnError() bool          { return false }
func (sqliteEngine) BatchesCreates() bool         { return false }
func (sqliteEngine) Prepares() bool               { return true }
func (sqliteEngine) RetriesMigrationRace() bool   { return false }
func (e sqliteEngine) ChangeHead() ChangeHead     { return lastWritten{e.n.Changes} }
func (sqliteEngine) Placeholders(q string) string { return q }
func (sqliteEngine) Time(t time.Time) any         { return domain.Normalize(t).UnixMicro() }

func (sqliteEngine) TableExistsQuery() string {
	return `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
}

func (sqliteEngine) ColumnExistsQuery() string {
	return "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?"
}

func (e sqliteEngine) AddColumnIfMissing(ctx context.Context, tx bun.Tx, table, column, typ string) error {
	var n int
	if err := tx.QueryRowContext(ctx, e.ColumnExistsQuery(), table, column).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, "ALTER TABLE ? ADD COLUMN ? "+typ, bun.Ident(table), bun.Ident(column))
	return err
}

// WithTriggersOff drops table's triggers and creates them again from
// their own stored text after fn: SQLite cannot disable one.
func (sqliteEngine) WithTriggersOff(ctx context.Context, tx bun.Tx, table string, fn func() error) error {
	var triggers []struct{ name, sql string }
	rows, err := tx.QueryContext(ctx, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? ORDER BY name", table)
	if err != nil {
		return fmt.Errorf("bunstore: read the triggers of %s: %w", table, err)
	}
	for rows.Next() {
		var t struct{ name, sql string }
		if err := rows.Scan(&t.name, &t.sql); err != nil {
			_ = rows.Close()
			return fmt.Errorf("bunstore: read the triggers of %s: %w", table, err)
		}
		triggers = append(triggers, t)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, t := range triggers {
		if _, err := tx.ExecContext(ctx, "DROP TRIGGER "+QuoteIdent(t.name)); err != nil {
			return fmt.Errorf("bunstore: drop trigger %s: %w", t.name, err)
		}
	}
	if err := fn(); err != nil {
		return err
	}
	for _, t := range triggers {
		if _, err := tx.ExecContext(ctx, t.sql); err != nil {
			return fmt.Errorf("bunstore: create trigger %s again: %w", t.name, err)
		}
	}
	return nil
}

// DefineFold does nothing: SQLite's fold is a Go function registered with
// the driver (RegisterSQLiteFold).
func (sqliteEngine) DefineFold(context.Context, bun.IDB, string) error { return nil }

// sqliteNow is the current time in SQLite's time column form.
const sqliteNow = "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"

// ChangesTriggerDDL returns the statements creating table's triggers:
// one per kind of change. table passed ValidateTableName, so it is safe
// inside a string literal.
func (e sqliteEngine) ChangesTriggerDDL(table string) []string {
	row := func(kind, rec, deleted string) string {
		return "INSERT INTO " + e.n.Changes + " (" + e.n.ChangeColumns + ", at) VALUES ('" + table + "', " + kind + ", " +
			rec + ".id, " + rec + ".key, " + rec + ".type, " + rec + ".assignee_id, " + rec + ".data, " + rec + ".version, " +
			rec + ".date_created, " + rec + ".date_updated, " + deleted + ", " + rec + ".expires_at, " + sqliteNow + ");"
	}
	return []string{
		"CREATE TRIGGER IF NOT EXISTS " + ObjectName(table, "changes_insert") + " AFTER INSERT ON " + QuoteIdent(table) +
			" BEGIN " + row("'created'", "NEW", "NEW.date_deleted") + " END",
		"CREATE TRIGGER IF NOT EXISTS " + ObjectName(table, "changes_update") + " AFTER UPDATE ON " + QuoteIdent(table) +
			" BEGIN " + row("CASE WHEN OLD.date_deleted IS NULL AND NEW.date_deleted IS NOT NULL THEN 'deleted' ELSE 'updated' END",
			"NEW", "NEW.date_deleted") + " END",
		"CREATE TRIGGER IF NOT EXISTS " + ObjectName(table, "changes_delete") + " AFTER DELETE ON " + QuoteIdent(table) +
			" WHEN OLD.date_deleted IS NULL BEGIN " +
			row("CASE WHEN OLD.expires_at IS NULL THEN 'deleted' ELSE 'expired' END",
				"OLD", "COALESCE(OLD.expires_at, "+sqliteNow+")") + " END",
	}
}

func (sqliteEngine) ChangesTriggerDropDDL(table string) []string {
	return dropTriggers(table, "changes_insert", "changes_update", "changes_delete")
}

// dropTriggers returns the statements dropping table's triggers of the
// suffixes given.
func dropTriggers(table string, suffixes ...string) []string {
	var out []string
	for _, s := range suffixes {
		out = append(out, "DROP TRIGGER IF EXISTS "+ObjectName(table, s))
	}
	return out
}

// ChangesRemovedDDL: SQLite's delete trigger stays a row trigger (its
// triggers are row triggers only).
func (sqliteEngine) ChangesRemovedDDL(string) []string     { return nil }
func (sqliteEngine) ChangesRemovedDownDDL(string) []string { return nil }

// UsageTableDDL: SQLite checks a quota with SQLiteQuotaCheck, no function.
func (sqliteEngine) UsageTableDDL() []string { return nil }

// UsageTriggerDDL: row triggers, each counting one row's change in shard
// 0 (bunstore's usage_schema.go says what counts). Every insert and update logs a
// change of the row as written, a removal of a row not deleted before one
// of the row as it was.
func (e sqliteEngine) UsageTriggerDDL(table string) []string {
	t := QuoteIdent(table)
	add := func(rec string) string {
		return "INSERT INTO " + e.n.Usage + " (entity, assignee_id, shard, entries, bytes) VALUES ('" + table + "', " +
			rec + ".assignee_id, 0, 1, octet_length(" + rec + ".data) + " + ChangeCost(rec) + ") " +
			"ON CONFLICT (entity, assignee_id, shard) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;"
	}
	count := func(rec, entries, bytes string) string {
		return "UPDATE " + e.n.Usage + " SET entries = entries + " + entries + ", bytes = bytes + " + bytes +
			" WHERE entity = '" + table + "' AND assignee_id = " + rec + ".assignee_id AND shard = 0;"
	}
	trigger := func(suffix, event, when, body string) string {
		return "CREATE TRIGGER IF NOT EXISTS " + ObjectName(table, suffix) + " AFTER " + event + " ON " + t +
			" WHEN " + when + " BEGIN " + body + " END"
	}
	stays := "OLD.assignee_id = NEW.assignee_id"
	return []string{
		trigger("usage_insert", "INSERT", "true", add("NEW")),
		trigger("usage_resize", "UPDATE", stays,
			count("NEW", "0", "octet_length(NEW.data) - octet_length(OLD.data) + "+ChangeCost("NEW"))),
		trigger("usage_leave", "UPDATE", "NOT ("+stays+")", count("OLD", "-1", "-octet_length(OLD.data)")),
		trigger("usage_enter", "UPDATE", "NOT ("+stays+")", add("NEW")),
		trigger("usage_delete", "DELETE", "true", count("OLD", "-1",
			"-octet_length(OLD.data) + CASE WHEN OLD.date_deleted IS NULL THEN "+ChangeCost("OLD")+" ELSE 0 END")),
	}
}

// UsageShard: one writer, one shard.
func (sqliteEngine) UsageShard() string { return "0" }

// RecountLocks: the migration's IMMEDIATE transaction is the one writer.
func (sqliteEngine) RecountLocks(...string) []string { return nil }

func (sqliteEngine) UsageTriggerDropDDL(table string) []string {
	return dropTriggers(table, "usage_insert", "usage_resize", "usage_leave", "usage_enter", "usage_delete")
}

// Guarded: where is ANDed to the statement's WHERE (an INSERT … SELECT
// gets it as its WHERE).
func (e sqliteEngine) Guarded(entity string, g Guard) (with, from, where string, args []any) {
	return "", "", SQLiteQuotaCheck(e.n.Usage), SQLiteQuotaArgs(entity, g)
}

// SQLiteQuotaCheck is the condition an SQLite statement under a quota
// adds, on the counts' table usage; its arguments are SQLiteQuotaArgs.
func SQLiteQuotaCheck(usage string) string {
	return "NOT EXISTS (SELECT 1 FROM " + usage + " WHERE entity = ? AND assignee_id = ? AND shard = 0 " +
		"AND (entries + ? > ? OR bytes + ? > ?))"
}

// SQLiteQuotaArgs are the arguments of SQLiteQuotaCheck for a write to
// entity under g.
func SQLiteQuotaArgs(entity string, g Guard) []any {
	maxEntries, maxBytes := g.limits()
	return []any{entity, g.Assignee, g.Entries, maxEntries, g.Bytes, maxBytes}
}

func (sqliteEngine) LockTableForWriters(context.Context, bun.Tx, string) error { return nil }

// LockMigrations: SQLite's single writer and idempotent DDL suffice.
func (sqliteEngine) LockMigrations(context.Context, *bun.DB, int64) (func(), error) {
	return func() {}, nil
}

func (sqliteEngine) LockThrottleKeys(context.Context, bun.Tx, int32, []string) error { return nil }

// PurgeStatement deletes a UNION ALL of the two index walks; SQLite's
// planner would scan the table for the OR, and its one writer needs no row
// locks.
func (sqliteEngine) PurgeStatement(table bun.Ident, now time.Time, limit int) (string, []any) {
	return "DELETE FROM ? WHERE id IN (SELECT id FROM ? WHERE date_deleted IS NOT NULL " +
		"UNION ALL SELECT id FROM ? WHERE date_deleted IS NULL AND expires_at <= ? LIMIT ?)", []any{table, table, table, TimeArg(now), limit}
}

func (e sqliteEngine) Purge(ctx context.Context, db bun.IDB, table bun.Ident, now time.Time, limit int) (int64, error) {
	query, args := e.PurgeStatement(table, now, limit)
	return dberr.Exec(ctx, db, query, args...)
}

// errQueryBound is the cause of the context that bounds a statement
// (BoundQuery).
var errQueryBound = errors.New("bunstore: the list's statement ran past the query bound")

// BoundQuery bounds fn by a deadline of its context: the driver
// interrupts the statement.
func (sqliteEngine) BoundQuery(ctx context.Context, limit time.Duration, conn bun.Conn, fn func(ctx context.Context, db bun.IDB) error) error {
	qctx, cancel := context.WithTimeoutCause(ctx, limit, errQueryBound)
	defer cancel()
	err := fn(qctx, conn)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(qctx), errQueryBound) {
		return fmt.Errorf("%w: %w", domain.ErrQueryTooExpensive, err)
	}
	return err
}

func (sqliteEngine) Check(ctx context.Context, db *bun.DB) error { return checkSQLite(ctx, db, statFS) }

// Backup copies the database with VACUUM INTO. The file is
// created empty, mode 0600 and exclusively (an existing path or a link
// is refused) before the copy: VACUUM INTO fills an empty file, and keeps
// its mode, so the copy is never readable by others, not even while it is
// written. A failed copy removes the file.
func (sqliteEngine) Backup(ctx context.Context, db *bun.DB, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists; backup writes a new file only", path)
	}
	if err != nil {
		return err
	}
	// The umask may only take bits away; Chmod makes it exactly 0600.
	if err := errors.Join(f.Chmod(0o600), f.Close()); err != nil {
		_ = os.Remove(path)
		return err
	}
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		_ = os.Remove(path)
		return dberr.Translate(ctx, dberr.Wrap("copy the database", err))
	}
	return nil
}

var registerFoldOnce sync.Once

// RegisterSQLiteFold registers domain.FoldCase as the SQLite function
// name, once per process, before the first connection opens.
func RegisterSQLiteFold(name string) {
	registerFoldOnce.Do(func() {
		sqlite.MustRegisterDeterministicScalarFunction(name, 1,
			func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				switch v := args[0].(type) {
				case nil:
					return nil, nil
				case string:
					return domain.FoldCase(v), nil
				case []byte:
					return domain.FoldCase(string(v)), nil
				default:
					return v, nil
				}
			})
	})
}

// lastWritten is SQLite's head of the change log table: its one writer
// commits the revisions in order, so the last one written is the head.
type lastWritten struct{ table string }

func (h lastWritten) Read(ctx context.Context, db *bun.DB) (int64, error) {
	var head int64
	err := dberr.WithRetry(ctx, func() error {
		return db.QueryRowContext(ctx, "SELECT COALESCE(MAX(rev), 0) FROM "+h.table).Scan(&head)
	})
	if err != nil {
		return 0, dberr.Wrap("read the change log's head", err)
	}
	return head, nil
}

func (lastWritten) Trails() bool  { return false }
func (lastWritten) Pending() bool { return false }
