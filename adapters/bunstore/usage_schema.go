package bunstore

import (
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/uptrace/bun/migrate"
)

// Quotas (README, "Quotas"; domain.Quota says what counts) read the
// counts of cache_usage, kept in the transaction of every change:
//
//   - cache_usage (entity, assignee_id, shard, entries, bytes): per cache
//     table (entity) and assignee, the rows of entity until they are
//     removed (live, expired or deleted) with the bytes of their data,
//     plus the bytes of what the assignee's writes keep besides: each
//     change in the change log (changeCost, as domain.ChangeBytes) until
//     ChangeLog.Prune removes it, and each idempotency record (its cost
//     column, domain.RecordBytes) until it is purged. An assignee's counts
//     are the sums over its shards. A write that finds the quota used up
//     removes its assignee's dead rows first (cache_quota.go), so a dead
//     entry never takes a place for long.
//
// The entity's triggers count its rows and the changes they log; Prune
// and the idempotency records' statements count theirs in Go, in the
// transaction that writes them.
//
// Triggers rather than statements in the repository keep the counts right
// whichever path writes (the sweeper, clear, import, a path written later),
// as the change log's triggers do.
//
// Shards exist for PostgreSQL, where a count row stays locked from the
// statement that changes it to its commit: with one row per assignee,
// every writer of an assignee would wait for the previous one's commit
// (measured: 4× slower creates by eight writers of one assignee, quota or
// not). So a trigger adds to the shard of its connection,
// 1 + pg_backend_pid() % 15, where writers of other connections rarely
// meet it; shard 0 holds the counts the migration found. Writes under a
// quota serialise on an advisory lock instead (cache_usage_admit), which
// removals and writes without a quota never wait for. Every change counts
// once per statement (internal/engine's usageAddedFunction says why not
// per row), from the statement's transition tables, one upsert per
// assignee in assignee order, so two replicas writing or purging at once
// lock count rows in the same order and never deadlock. SQLite has one
// writer: every count is shard 0.
//
// The count rows of an assignee stay when its entries are gone (zeros);
// they cost a few dozen bytes per assignee and table that ever wrote.
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
		Up: ddlMigration(eng, "count what "+table+" keeps", func(eng engine.Engine) []string {
			t := engine.QuoteIdent(table)
			// In the order writers take them: a create with a key writes
			// its record, then the entry, whose trigger logs the change.
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
		}),
		Down: ddlMigration(eng, "keep counting what "+table+" keeps", func(engine.Engine) []string { return nil }),
	}
}

// usageTableMigration returns the migration creating cache_usage.
func usageTableMigration(eng engine.Engine) migrate.Migration {
	return migrate.Migration{
		Name: usageMigration,
		Up: ddlMigration(eng, "create the usage counts", func(eng engine.Engine) []string {
			text, without := eng.TextColumn(), eng.WithoutRowID()
			out := []string{"CREATE TABLE IF NOT EXISTS " + usageTable + " (" +
				"entity " + text + " NOT NULL, assignee_id " + text + " NOT NULL, shard smallint NOT NULL, " +
				"entries bigint NOT NULL, bytes bigint NOT NULL, " +
				"PRIMARY KEY (entity, assignee_id, shard))" + without}
			return append(out, eng.UsageTableDDL()...)
		}),
		Down: ddlMigration(eng, "drop the usage counts", func(eng engine.Engine) []string {
			out := []string{"DROP TABLE IF EXISTS " + usageTable}
			if eng.UsageTableDDL() != nil {
				out = append(out, "DROP FUNCTION IF EXISTS cache_usage_admit")
			}
			return out
		}),
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
		Up: ddlMigration(eng, "count the usage of "+table, func(eng engine.Engine) []string {
			return usageDDL(eng, table)
		}),
		Down: ddlMigration(eng, "stop counting the usage of "+table, func(eng engine.Engine) []string {
			return usageDropDDL(eng, table)
		}),
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
