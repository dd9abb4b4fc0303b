package bunstore

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

// sqliteEngine is SQLite's side of the engine seam (engine.go): its column
// types, its triggers, its statements. SQLite has one writer at a time
// (the write gate, writegate.go), so it needs no row, table or advisory
// lock: its IMMEDIATE transactions already hold the whole database.
type sqliteEngine struct{}

// Times are INTEGER microseconds since the Unix epoch (UTC): an integer
// compares correctly, indexes well and round-trips exactly the
// microsecond precision domain.Normalize keeps (docs/storage.md).
func (sqliteEngine) timeColumn() string       { return "INTEGER" }
func (sqliteEngine) textColumn() string       { return "TEXT" }
func (sqliteEngine) bytesColumn() string      { return "BLOB" }
func (sqliteEngine) serialPrimaryKey() string { return "INTEGER PRIMARY KEY" }
func (sqliteEngine) serialRevision() string   { return "INTEGER PRIMARY KEY AUTOINCREMENT" }
func (sqliteEngine) withoutRowID() string     { return " WITHOUT ROWID" }
func (sqliteEngine) positionFunction() string { return "instr" }
func (sqliteEngine) forUpdate() string        { return "" }
func (sqliteEngine) skipLocked() string       { return "" }
func (sqliteEngine) abortsOnError() bool      { return false }
func (sqliteEngine) batchesCreates() bool     { return false }
func (sqliteEngine) prepares() bool           { return true }
func (sqliteEngine) retriesMigrationRace() bool {
	return false
}
func (sqliteEngine) changeHead() changeHead       { return lastWritten{} }
func (sqliteEngine) placeholders(q string) string { return q }
func (sqliteEngine) time(t time.Time) any         { return domain.Normalize(t).UnixMicro() }

func (sqliteEngine) tableExistsQuery() string {
	return `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
}

func (sqliteEngine) columnExistsQuery() string {
	return "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?"
}

func (e sqliteEngine) addColumnIfMissing(ctx context.Context, tx bun.Tx, table, column, typ string) error {
	var n int
	if err := tx.QueryRowContext(ctx, e.columnExistsQuery(), table, column).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, "ALTER TABLE ? ADD COLUMN ? "+typ, bun.Ident(table), bun.Ident(column))
	return err
}

// withTriggersOff drops table's triggers and creates them again from
// their own stored text after fn: SQLite cannot disable one.
func (sqliteEngine) withTriggersOff(ctx context.Context, tx bun.Tx, table string, fn func() error) error {
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
		if _, err := tx.ExecContext(ctx, "DROP TRIGGER "+quoteIdent(t.name)); err != nil {
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

// defineFold does nothing: SQLite's fold is a Go function registered with
// the driver (fold.go).
func (sqliteEngine) defineFold(context.Context, bun.IDB) error { return nil }

// sqliteNow is the current time in SQLite's time column form.
const sqliteNow = "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"

// changesTriggerDDL returns the statements creating table's triggers:
// one per kind of change. table passed ValidateTableName, so it is safe
// inside a string literal.
func (sqliteEngine) changesTriggerDDL(table string) []string {
	row := func(kind, rec, deleted string) string {
		return "INSERT INTO " + changesTable + " (" + changeColumns + ", at) VALUES ('" + table + "', " + kind + ", " +
			rec + ".id, " + rec + ".key, " + rec + ".type, " + rec + ".assignee_id, " + rec + ".data, " + rec + ".version, " +
			rec + ".date_created, " + rec + ".date_updated, " + deleted + ", " + rec + ".expires_at, " + sqliteNow + ");"
	}
	return []string{
		"CREATE TRIGGER IF NOT EXISTS " + objectName(table, "changes_insert") + " AFTER INSERT ON " + quoteIdent(table) +
			" BEGIN " + row("'created'", "NEW", "NEW.date_deleted") + " END",
		"CREATE TRIGGER IF NOT EXISTS " + objectName(table, "changes_update") + " AFTER UPDATE ON " + quoteIdent(table) +
			" BEGIN " + row("CASE WHEN OLD.date_deleted IS NULL AND NEW.date_deleted IS NOT NULL THEN 'deleted' ELSE 'updated' END",
			"NEW", "NEW.date_deleted") + " END",
		"CREATE TRIGGER IF NOT EXISTS " + objectName(table, "changes_delete") + " AFTER DELETE ON " + quoteIdent(table) +
			" WHEN OLD.date_deleted IS NULL BEGIN " +
			row("CASE WHEN OLD.expires_at IS NULL THEN 'deleted' ELSE 'expired' END",
				"OLD", "COALESCE(OLD.expires_at, "+sqliteNow+")") + " END",
	}
}

func (sqliteEngine) changesTriggerDropDDL(table string) []string {
	var out []string
	for _, s := range []string{"changes_insert", "changes_update", "changes_delete"} {
		out = append(out, "DROP TRIGGER IF EXISTS "+objectName(table, s))
	}
	return out
}

// changesRemovedDDL: SQLite's delete trigger stays a row trigger (its
// triggers are row triggers only).
func (sqliteEngine) changesRemovedDDL(string) []string     { return nil }
func (sqliteEngine) changesRemovedDownDDL(string) []string { return nil }

// usageTableDDL: SQLite checks a quota with sqliteGuard, no function.
func (sqliteEngine) usageTableDDL() []string { return nil }

// usageTriggerDDL returns the row triggers that keep table's counts in
// cache_usage.
// usageTriggerDDL: row triggers, each counting one row's change in shard
// 0 (usage_schema.go says what counts). Every insert and update logs a
// change of the row as written, a removal of a row not deleted before one
// of the row as it was.
func (sqliteEngine) usageTriggerDDL(table string) []string {
	t := quoteIdent(table)
	add := func(rec string) string {
		return "INSERT INTO " + usageTable + " (entity, assignee_id, shard, entries, bytes) VALUES ('" + table + "', " +
			rec + ".assignee_id, 0, 1, octet_length(" + rec + ".data) + " + changeCost(rec) + ") " +
			"ON CONFLICT (entity, assignee_id, shard) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;"
	}
	count := func(rec, entries, bytes string) string {
		return "UPDATE " + usageTable + " SET entries = entries + " + entries + ", bytes = bytes + " + bytes +
			" WHERE entity = '" + table + "' AND assignee_id = " + rec + ".assignee_id AND shard = 0;"
	}
	trigger := func(suffix, event, when, body string) string {
		return "CREATE TRIGGER IF NOT EXISTS " + objectName(table, suffix) + " AFTER " + event + " ON " + t +
			" WHEN " + when + " BEGIN " + body + " END"
	}
	stays := "OLD.assignee_id = NEW.assignee_id"
	return []string{
		trigger("usage_insert", "INSERT", "true", add("NEW")),
		trigger("usage_resize", "UPDATE", stays,
			count("NEW", "0", "octet_length(NEW.data) - octet_length(OLD.data) + "+changeCost("NEW"))),
		trigger("usage_leave", "UPDATE", "NOT ("+stays+")", count("OLD", "-1", "-octet_length(OLD.data)")),
		trigger("usage_enter", "UPDATE", "NOT ("+stays+")", add("NEW")),
		trigger("usage_delete", "DELETE", "true", count("OLD", "-1",
			"-octet_length(OLD.data) + CASE WHEN OLD.date_deleted IS NULL THEN "+changeCost("OLD")+" ELSE 0 END")),
	}
}

// usageShard: one writer, one shard.
func (sqliteEngine) usageShard() string { return "0" }

// recountLocks: the migration's IMMEDIATE transaction is the one writer.
func (sqliteEngine) recountLocks(string) []string { return nil }

func (sqliteEngine) usageTriggerDropDDL(table string) []string {
	var out []string
	for _, s := range []string{"usage_insert", "usage_resize", "usage_leave", "usage_enter", "usage_delete"} {
		out = append(out, "DROP TRIGGER IF EXISTS "+objectName(table, s))
	}
	return out
}

// guarded: where is ANDed to the statement's WHERE (an INSERT … SELECT
// gets it as its WHERE).
func (sqliteEngine) guarded(r *CacheRepository, g *quotaGuard) (with, from, where string, args []any) {
	return "", "", sqliteGuard, r.sqliteGuardArgs(g)
}

func (sqliteEngine) lockTableForWriters(context.Context, bun.Tx, string) error { return nil }

// lockMigrations: SQLite's single writer and idempotent DDL suffice.
func (sqliteEngine) lockMigrations(context.Context, *bun.DB) (func(), error) { return func() {}, nil }

func (sqliteEngine) lockThrottleKeys(context.Context, bun.Tx, []string) error { return nil }

// purgeStatement deletes a UNION ALL of the two index walks; SQLite's
// planner would scan the table for the OR, and its one writer needs no row
// locks.
func (sqliteEngine) purgeStatement(table bun.Ident, now time.Time, limit int) (string, []any) {
	return "DELETE FROM ? WHERE id IN (SELECT id FROM ? WHERE date_deleted IS NOT NULL " +
		"UNION ALL SELECT id FROM ? WHERE date_deleted IS NULL AND expires_at <= ? LIMIT ?)", []any{table, table, table, timeArg(now), limit}
}

func (e sqliteEngine) purge(ctx context.Context, db bun.IDB, table bun.Ident, now time.Time, limit int) (int64, error) {
	query, args := e.purgeStatement(table, now, limit)
	var n int64
	err := dberr.WithRetry(ctx, func() error {
		res, err := db.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// boundQuery bounds fn by a deadline of its context: the driver
// interrupts the statement.
func (sqliteEngine) boundQuery(ctx context.Context, limit time.Duration, conn bun.Conn, fn func(ctx context.Context, db bun.IDB) error) error {
	qctx, cancel := context.WithTimeoutCause(ctx, limit, errQueryBound)
	defer cancel()
	err := fn(qctx, conn)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(qctx), errQueryBound) {
		return fmt.Errorf("%w: %w", domain.ErrQueryTooExpensive, err)
	}
	return err
}

func (sqliteEngine) check(ctx context.Context, db *bun.DB) error { return checkSQLite(ctx, db, statFS) }

// backup copies the database with VACUUM INTO (backup.go). The file is
// created empty, mode 0600 and exclusively (an existing path or a link
// is refused) before the copy: VACUUM INTO fills an empty file, and keeps
// its mode, so the copy is never readable by others, not even while it is
// written. A failed copy removes the file.
func (sqliteEngine) backup(ctx context.Context, db *bun.DB, path string) error {
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

// registerSQLiteFold registers foldFunction with the SQLite driver, once
// per process, before the first connection opens.
func registerSQLiteFold() {
	registerFoldOnce.Do(func() {
		sqlite.MustRegisterDeterministicScalarFunction(foldFunction, 1,
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

// lastWritten is SQLite's change log head: its one writer commits the
// revisions in order, so the last one written is the head.
type lastWritten struct{}

func (lastWritten) read(ctx context.Context, db *bun.DB) (int64, error) {
	var head int64
	err := dberr.WithRetry(ctx, func() error {
		return db.QueryRowContext(ctx, "SELECT COALESCE(MAX(rev), 0) FROM "+changesTable).Scan(&head)
	})
	if err != nil {
		return 0, dberr.Wrap("read the change log's head", err)
	}
	return head, nil
}

func (lastWritten) trails() bool  { return false }
func (lastWritten) pending() bool { return false }
