package bunstore

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// The change log (ARCHITECTURE.md, "The change feed"):
//
//   - cache_changes: one row per change of any cache table. rev is the
//     revision: AUTOINCREMENT on SQLite (never reused, even after the
//     newest rows are pruned), an identity column on PostgreSQL. The entry
//     columns copy the row as it was after the change (for a deleted or
//     expired entry: as it last was, with date_deleted set). at is the
//     database's clock when the change was recorded.
//   - cache_changes_state: one row; pruned is the highest revision pruned.
//
// Triggers on every cache table write the log, so every statement that
// changes a row records it in the same transaction, whichever path runs it:
//
//   - INSERT: created.
//   - UPDATE: deleted when date_deleted goes from NULL to a time, else
//     updated.
//   - DELETE of a row not deleted before (only dead rows are ever removed,
//     so it expired): expired, with date_deleted = expires_at, the instant
//     it became invisible. Removing a soft-deleted row records nothing:
//     its deletion was recorded when it happened.
const (
	changesTable      = "cache_changes"
	changesStateTable = "cache_changes_state"
	// changesMigration creates the log; changesTriggerVersion prefixes the
	// migration adding one cache table's triggers. Both sort after the
	// cache tables' own migrations.
	changesMigration      = "20261126000100_cache_changes"
	changesTriggerVersion = "20261126000200"
	// changesRemovedVersion prefixes the migration that, on PostgreSQL,
	// records a DELETE statement's removals once per statement
	// (changesRemovedDDL).
	changesRemovedVersion = "20261202000100"
	// changesAssigneeMigration adds the index that serves the replay of
	// one assignee's changes (ChangeLog.ChangesOf).
	changesAssigneeMigration = "20261210000100_cache_changes_assignee"
	changesAssigneeIndex     = "cache_changes_assignee_rev_idx"
)

// changesTables lists the tables of the log; no cache table may take
// their names.
func changesTables() []string { return []string{changesTable, changesStateTable} }

// changesLogMigration returns the migration creating the log.
func changesLogMigration(eng engine.Engine) migrate.Migration {
	return migrate.Migration{
		Name: changesMigration,
		Up:   ddlMigration("create the change log", changesDDL(eng)...),
		Down: ddlMigration("drop the change log", "DROP TABLE IF EXISTS "+changesStateTable, "DROP TABLE IF EXISTS "+changesTable),
	}
}

// changesAssigneeIndexMigration returns the migration adding the index
// on (assignee_id, rev): a resuming owner's replay reads its own changes
// in revision order and stops at its page, whatever other users wrote.
// The log holds the retention's changes (an hour by default), so building
// it, even on PostgreSQL without CONCURRENTLY, is short.
func changesAssigneeIndexMigration() migrate.Migration {
	return migrate.Migration{
		Name: changesAssigneeMigration,
		Up:   ddlMigration("index the change log by assignee", "CREATE INDEX IF NOT EXISTS "+changesAssigneeIndex+" ON "+changesTable+" (assignee_id, rev)"),
		Down: ddlMigration("drop the change log's assignee index", "DROP INDEX IF EXISTS "+changesAssigneeIndex),
	}
}

// changesTriggerMigration returns the migration adding table's triggers.
func changesTriggerMigration(eng engine.Engine, table string) migrate.Migration {
	return migrate.Migration{
		Name: changesTriggerVersion + "_cache_" + table + "_changes",
		Up:   ddlMigration("add the change triggers of "+table, eng.ChangesTriggerDDL(table)...),
		Down: ddlMigration("drop the change triggers of "+table, eng.ChangesTriggerDropDDL(table)...),
	}
}

// changesRemovedMigration returns the migration that makes table's
// removals on PostgreSQL be recorded once per DELETE statement rather
// than once per row (the sweeper removes a thousand at a time); on SQLite
// it changes nothing. Inserts and updates, one row a statement, keep the
// row trigger.
func changesRemovedMigration(eng engine.Engine, table string) migrate.Migration {
	return migrate.Migration{
		Name: changesRemovedVersion + "_cache_" + table + "_changes_removed",
		Up:   ddlMigration("record the removals of "+table+" per statement", eng.ChangesRemovedDDL(table)...),
		Down: ddlMigration("record the removals of "+table+" per row", eng.ChangesRemovedDownDDL(table)...),
	}
}

// ddlMigration returns a migration step running stmts in one
// transaction, its failure named by what.
func ddlMigration(what string, stmts ...string) func(context.Context, *migrate.Migrator, *migrate.Migration) error {
	return func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
		return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := execAll(ctx, tx, stmts); err != nil {
				return fmt.Errorf("bunstore: %s: %w", what, err)
			}
			return nil
		})
	}
}

// execStep is the migration step that runs stmts in order in one
// transaction, its error as is.
func execStep(stmts ...string) func(context.Context, *migrate.Migrator, *migrate.Migration) error {
	return func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
		return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return execAll(ctx, tx, stmts) })
	}
}

// execAll runs stmts in order on db, up to the first that fails.
func execAll(ctx context.Context, db bun.IDB, stmts []string) error {
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// changeColumns are the columns of a change besides rev and at.
const changeColumns = "entity, kind, id, key, type, assignee_id, data, version, date_created, date_updated, date_deleted, expires_at"

func changesDDL(eng engine.Engine) []string {
	text, ts := eng.TextColumn(), eng.TimeColumn()
	rev := "rev " + eng.SerialRevision()
	return []string{
		"CREATE TABLE IF NOT EXISTS " + changesTable + " (" + rev + ", " +
			"entity " + text + " NOT NULL, " +
			"kind " + text + " NOT NULL, " +
			"id " + text + " NOT NULL, " +
			"key " + text + " NOT NULL, " +
			"type " + text + " NOT NULL, " +
			"assignee_id " + text + " NOT NULL, " +
			"data TEXT NOT NULL, " +
			"version INTEGER NOT NULL, " +
			"date_created " + ts + " NOT NULL, " +
			"date_updated " + ts + " NOT NULL, " +
			"date_deleted " + ts + ", " +
			"expires_at " + ts + ", " +
			"at " + ts + " NOT NULL)",
		"CREATE TABLE IF NOT EXISTS " + changesStateTable + " (id INTEGER PRIMARY KEY, pruned bigint NOT NULL)",
		"INSERT INTO " + changesStateTable + " (id, pruned) VALUES (1, 0) ON CONFLICT DO NOTHING",
	}
}

// pgChangesSequence is the identity sequence of cache_changes.rev, as
// PostgreSQL names it.
const pgChangesSequence = "cache_changes_rev_seq"
