package bunstore

import (
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/uptrace/bun/migrate"
)

// Quotas (README, "Quotas"; ARCHITECTURE.md, "Quotas") read the counts of
// cache_usage (entity, assignee_id, shard, entries, bytes): per cache
// table (entity) and assignee, the rows of entity until they are removed
// (live, expired or deleted) with the bytes of their data, plus what the
// assignee's writes keep besides: each change in the change log
// (engine.ChangeCost, as domain.ChangeBytes) until ChangeLog.Prune removes
// it, and each idempotency record (its cost column) until it is purged.
// The entity's triggers count its rows and the changes they log, whichever
// path writes; Prune and the idempotency records count theirs in Go, in
// the transaction that writes them.
//
// Shards exist for PostgreSQL, where a count row stays locked from the
// statement that changes it to its commit: a trigger adds to the shard of
// its connection (1 + pg_backend_pid() % 15), so writers of one assignee
// rarely wait for each other; shard 0 holds the counts a migration found,
// and an assignee's counts are the sums over its shards. Every change
// counts once per statement, one upsert per assignee in assignee order, so
// two replicas never deadlock on count rows. SQLite has one writer: every
// count is shard 0. Count rows stay (zeros) when an assignee's entries are
// gone.
const (
	usageTable = "cache_usage"
	// usageMigration creates the table; usageTriggerVersion prefixes the
	// migration adding one cache table's triggers, index and counts.
	usageMigration      = "20261201000100_cache_usage"
	usageTriggerVersion = "20261201000200"
	// usageKeptVersion prefixes the migration that makes table's counts
	// include deleted rows and the changes logged (usageKeptMigration);
	// idempotencyKeptMigration gives the records their owner and cost.
	usageKeptVersion         = "20261220000200"
	idempotencyKeptMigration = "20261220000100_idempotency_kept"
)

// usageKeptMigration returns the migration that brings table's triggers
// to today's counting (usageTriggerDDL) and counts again what table,
// the change log and the idempotency records hold for it, with writers
// kept out meanwhile (RecountLocks), so the counts start exact.
func usageKeptMigration(eng engine.Engine, table string) migrate.Migration {
	return migrate.Migration{
		Name: usageKeptVersion + "_cache_" + table + "_usage_kept",
		Up:   ddlMigration("count what "+table+" keeps", usageKeptDDL(eng, table)...),
		Down: ddlMigration("keep counting what " + table + " keeps"),
	}
}

// usageKeptDDL returns the statements of usageKeptMigration.
func usageKeptDDL(eng engine.Engine, table string) []string {
	t := engine.QuoteIdent(table)
	// In the order writers take them: a create with a key writes its
	// record, then the entry, whose trigger logs the change.
	out := eng.RecountLocks(idempotencyTable, t, changesTable)
	out = append(out, eng.UsageTriggerDropDDL(table)...)
	out = append(out, eng.UsageTriggerDDL(table)...)
	return append(out,
		"DELETE FROM "+usageTable+" WHERE entity = '"+table+"'",
		"INSERT INTO "+usageTable+" (entity, assignee_id, shard, entries, bytes) SELECT '"+table+"', assignee_id, 0, sum(n), sum(b) FROM ("+
			"SELECT assignee_id, 1 AS n, octet_length(data) AS b FROM "+t+
			" UNION ALL SELECT assignee_id, 0, "+engine.ChangeCost(changesTable)+" FROM "+changesTable+" WHERE entity = '"+table+"'"+
			" UNION ALL SELECT assignee_id, 0, cost FROM "+idempotencyTable+" WHERE entity = '"+table+"'"+
			") kept GROUP BY assignee_id")
}

// usageTableMigration returns the migration creating cache_usage.
func usageTableMigration(eng engine.Engine) migrate.Migration {
	drop := []string{"DROP TABLE IF EXISTS " + usageTable}
	if eng.UsageTableDDL() != nil {
		drop = append(drop, "DROP FUNCTION IF EXISTS cache_usage_admit")
	}
	return migrate.Migration{
		Name: usageMigration,
		Up: ddlMigration("create the usage counts", append([]string{"CREATE TABLE IF NOT EXISTS " + usageTable + " (" +
			"entity " + eng.TextColumn() + " NOT NULL, assignee_id " + eng.TextColumn() + " NOT NULL, shard smallint NOT NULL, " +
			"entries bigint NOT NULL, bytes bigint NOT NULL, " +
			"PRIMARY KEY (entity, assignee_id, shard))" + eng.WithoutRowID()}, eng.UsageTableDDL()...)...),
		Down: ddlMigration("drop the usage counts", drop...),
	}
}

// usageTriggerMigration returns the migration that makes table's changes
// count: its triggers, the index that finds an assignee's expired rows,
// and the counts of the rows it already holds. On PostgreSQL creating the
// triggers locks the table against writers until the migration commits, so
// the counts start exact even while an older replica writes.
func usageTriggerMigration(eng engine.Engine, table string) migrate.Migration {
	return migrate.Migration{
		Name: usageTriggerVersion + "_cache_" + table + "_usage",
		Up:   ddlMigration("count the usage of "+table, usageDDL(eng, table)...),
		Down: ddlMigration("stop counting the usage of "+table, usageDropDDL(eng, table)...),
	}
}

// usageDDL returns the statements of usageTriggerMigration. table passed
// ValidateTableName, so it is safe inside a string literal.
func usageDDL(eng engine.Engine, table string) []string {
	t := engine.QuoteIdent(table)
	out := []string{
		"CREATE INDEX IF NOT EXISTS " + engine.QuoteIdent(cacheNamesOf(table).expiring) + " ON " + t +
			" (assignee_id, expires_at) WHERE date_deleted IS NULL AND expires_at IS NOT NULL",
	}
	out = append(out, eng.UsageTriggerDDL(table)...)
	return append(out,
		"DELETE FROM "+usageTable+" WHERE entity = '"+table+"'",
		"INSERT INTO "+usageTable+" (entity, assignee_id, shard, entries, bytes) SELECT '"+table+"', assignee_id, 0, count(*), "+
			"sum(octet_length(data)) FROM "+t+" WHERE date_deleted IS NULL GROUP BY assignee_id")
}

// usageDropDDL undoes usageDDL.
func usageDropDDL(eng engine.Engine, table string) []string {
	out := []string{"DROP INDEX IF EXISTS " + engine.QuoteIdent(cacheNamesOf(table).expiring)}
	out = append(out, eng.UsageTriggerDropDDL(table)...)
	return append(out, "DELETE FROM "+usageTable+" WHERE entity = '"+table+"'")
}
