package bunstore

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
	"github.com/uptrace/bun/schema"
)

// cacheMigrationVersion prefixes the migration that creates a cache table.
const cacheMigrationVersion = "20261125000100"

// cacheTableMigration returns the migration that creates one cache table
// with its indexes.
func cacheTableMigration(table string) migrate.Migration {
	return migrate.Migration{
		Name: cacheMigrationVersion + "_cache_" + table,
		Up: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
			return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				for _, stmt := range cacheTableDDL(tx, table) {
					if _, err := tx.ExecContext(ctx, stmt); err != nil {
						return err
					}
				}
				return nil
			})
		},
		Down: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
			_, err := m.DB().ExecContext(ctx, "DROP TABLE IF EXISTS ?", bun.Ident(table))
			return err
		},
	}
}

// cacheNames are the names of a cache table's constraints and indexes.
type cacheNames struct {
	pkey       string // the primary key (id); must end in _pkey, see errors.go
	naturalKey string // UNIQUE (key, type, assignee_id) among live rows
	assignee   string // live rows by assignee_id: lists and clears
	expires    string // rows with an expiry: purge
	deleted    string // deleted rows: purge
}

func cacheNamesOf(table string) cacheNames {
	return cacheNames{
		pkey:       objectName(table, "pkey"),
		naturalKey: objectName(table, "natural_key"),
		assignee:   objectName(table, "assignee"),
		expires:    objectName(table, "expires"),
		deleted:    objectName(table, "deleted"),
	}
}

// cacheTableObjects lists the names a cache table's schema takes besides
// the table's own.
func cacheTableObjects(table string) []string {
	n := cacheNamesOf(table)
	return []string{n.pkey, n.naturalKey, n.assignee, n.expires, n.deleted}
}

// objectName returns "<table>_<suffix>", shortened with a hash of table
// when it would pass PostgreSQL's 63-byte limit (which would otherwise
// truncate it silently, perhaps onto another name).
func objectName(table, suffix string) string {
	const limit = 63
	name := table + "_" + suffix
	if len(name) <= limit {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(table))
	tag := fmt.Sprintf("%08x", h.Sum32())
	return table[:limit-len(tag)-len(suffix)-2] + "_" + tag + "_" + suffix
}

// cacheTableDDL returns the statements that create a cache table. Data is
// text on both databases, never jsonb, which would reorder and reformat
// it: entries return their data byte for byte.
func cacheTableDDL(db bun.IDB, table string) []string {
	n := cacheNamesOf(table)
	text, ts := textColumnType(db), timeColumnType(db)
	gen := schema.NewQueryGen(db.Dialect())
	ident := func(s string) string { return string(gen.AppendIdent(nil, s)) }
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
