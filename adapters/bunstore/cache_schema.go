package bunstore

import (
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/uptrace/bun/migrate"
)

// cacheMigrationVersion prefixes the migration that creates a cache table;
// cacheListMigrationVersion the one that adds its list indexes.
const (
	cacheMigrationVersion         = "20261125000100"
	cacheListMigrationVersion     = "20261125000300"
	cacheCoveringMigrationVersion = "20261126100100"
)

// cacheTableMigration returns the migration that creates one cache table
// with its indexes.
func cacheTableMigration(eng engine.Engine, table string) migrate.Migration {
	return migrate.Migration{
		Name: cacheMigrationVersion + "_cache_" + table,
		Up:   execStep(cacheTableDDL(eng, table)...),
		Down: execStep("DROP TABLE IF EXISTS " + engine.QuoteIdent(table)),
	}
}

// cacheListMigration returns the migration that lets lists read a page in
// index order instead of sorting every matching row: by assignee then
// creation (the default sort of an owner's list) and by creation alone
// (lists across assignees). The first replaces the plain assignee index,
// which it covers.
func cacheListMigration(eng engine.Engine, table string) migrate.Migration {
	n := cacheNamesOf(table)
	return migrate.Migration{
		Name: cacheListMigrationVersion + "_cache_" + table + "_list",
		Up:   execStep(cacheListDDL(eng, table)...),
		Down: execStep("DROP INDEX IF EXISTS "+engine.QuoteIdent(n.assigneeCreated), "DROP INDEX IF EXISTS "+engine.QuoteIdent(n.created),
			"CREATE INDEX IF NOT EXISTS "+engine.QuoteIdent(n.assignee)+" ON "+engine.QuoteIdent(table)+" (assignee_id) WHERE date_deleted IS NULL"),
	}
}

// cacheCoveringMigration returns the migration that widens the
// assignee's list index into one that covers what list filters on most:
// (assignee_id, date_created, id, key, expires_at). A page filtered on
// key ($cont and the other text operators) then tests each candidate in
// the index and reads the table only for the rows it returns, where the
// narrower index read a row for every candidate (docs/benchmarks.md, "List
// queries"). The index replaces the narrower one.
func cacheCoveringMigration(eng engine.Engine, table string) migrate.Migration {
	n := cacheNamesOf(table)
	return migrate.Migration{
		Name: cacheCoveringMigrationVersion + "_cache_" + table + "_list_covering",
		Up:   execStep(cacheCoveringDDL(eng, table)...),
		Down: execStep("CREATE INDEX IF NOT EXISTS "+engine.QuoteIdent(n.assigneeCreated)+" ON "+engine.QuoteIdent(table)+
			" (assignee_id, date_created, id) WHERE date_deleted IS NULL", "DROP INDEX IF EXISTS "+engine.QuoteIdent(n.assigneeList)),
	}
}

func cacheCoveringDDL(eng engine.Engine, table string) []string {
	n := cacheNamesOf(table)
	ident := engine.QuoteIdent
	return []string{
		"CREATE INDEX IF NOT EXISTS " + ident(n.assigneeList) + " ON " + ident(table) +
			" (assignee_id, date_created, id, key, expires_at) WHERE date_deleted IS NULL",
		"DROP INDEX IF EXISTS " + ident(n.assigneeCreated),
	}
}

func cacheListDDL(eng engine.Engine, table string) []string {
	n := cacheNamesOf(table)
	ident := engine.QuoteIdent
	t := ident(table)
	return []string{
		"CREATE INDEX IF NOT EXISTS " + ident(n.assigneeCreated) + " ON " + t +
			" (assignee_id, date_created, id) WHERE date_deleted IS NULL",
		"CREATE INDEX IF NOT EXISTS " + ident(n.created) + " ON " + t + " (date_created, id) WHERE date_deleted IS NULL",
		"DROP INDEX IF EXISTS " + ident(n.assignee),
	}
}

// cacheNames are the names of a cache table's constraints and indexes.
type cacheNames struct {
	pkey       string // the primary key (id); must end in _pkey, see internal/dberr
	naturalKey string // UNIQUE (key, type, assignee_id) among live rows
	assignee   string // live rows by assignee_id: lists and clears
	expires    string // rows with an expiry: purge
	deleted    string // deleted rows: purge
	// assigneeCreated and created serve lists in their default order;
	// assigneeList replaced assigneeCreated (cacheCoveringMigration).
	assigneeCreated string
	created         string
	assigneeList    string
	// expiring finds an assignee's expired rows when a quota is used up
	// (usage_schema.go).
	expiring string
	// foldedKey indexes the folded key (fold_schema.go).
	foldedKey string
}

func cacheNamesOf(table string) cacheNames {
	return cacheNames{
		pkey:       engine.ObjectName(table, "pkey"),
		naturalKey: engine.ObjectName(table, "natural_key"),
		assignee:   engine.ObjectName(table, "assignee"),
		expires:    engine.ObjectName(table, "expires"),
		deleted:    engine.ObjectName(table, "deleted"),

		assigneeCreated: engine.ObjectName(table, "assignee_created"),
		created:         engine.ObjectName(table, "created"),
		assigneeList:    engine.ObjectName(table, "assignee_list"),
		expiring:        engine.ObjectName(table, "expiring"),

		foldedKey: engine.ObjectName(table, "folded_key"),
	}
}

// cacheTableObjects lists the names a cache table's schema takes besides
// the table's own.
func cacheTableObjects(table string) []string {
	n := cacheNamesOf(table)
	return []string{n.pkey, n.naturalKey, n.assignee, n.expires, n.deleted, n.assigneeCreated, n.created, n.assigneeList,
		n.expiring, n.foldedKey}
}

// cacheTableDDL returns the statements that create a cache table. Data is
// text on both databases, never jsonb, which would reorder and reformat
// it: entries return their data byte for byte.
func cacheTableDDL(eng engine.Engine, table string) []string {
	n := cacheNamesOf(table)
	text, ts := eng.TextColumn(), eng.TimeColumn()
	ident := engine.QuoteIdent
	t := ident(table)
	return []string{
		"CREATE TABLE IF NOT EXISTS " + t + " (" +
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
			"CONSTRAINT " + ident(n.pkey) + " PRIMARY KEY (id))",
		"CREATE UNIQUE INDEX IF NOT EXISTS " + ident(n.naturalKey) + " ON " + t +
			" (key, type, assignee_id) WHERE date_deleted IS NULL",
		"CREATE INDEX IF NOT EXISTS " + ident(n.assignee) + " ON " + t + " (assignee_id) WHERE date_deleted IS NULL",
		"CREATE INDEX IF NOT EXISTS " + ident(n.expires) + " ON " + t + " (expires_at) WHERE expires_at IS NOT NULL",
		"CREATE INDEX IF NOT EXISTS " + ident(n.deleted) + " ON " + t + " (date_deleted) WHERE date_deleted IS NOT NULL",
	}
}

// queryColumns maps each query field to its column.
var queryColumns = map[domain.QueryField]string{
	domain.FieldID:             "id",
	domain.FieldKey:            "key",
	domain.FieldType:           "type",
	domain.FieldAssigneeID:     "assignee_id",
	domain.FieldVersion:        "version",
	domain.FieldDateCreated:    "date_created",
	domain.FieldDateUpdated:    "date_updated",
	domain.FieldExpirationDate: "expires_at",
}
