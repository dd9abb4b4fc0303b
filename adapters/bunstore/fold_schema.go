package bunstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
)

// cacheFoldedMigrationVersion prefixes the migration that stores the
// folded key and type (fold.go).
const cacheFoldedMigrationVersion = "20261204000100"

// The folded forms of key and type as the L operators compare them:
// key_folded and type_folded hold domain.FoldCase of the column, written
// by every write, or NULL when the column is its own fold (any text
// without capitals, the common case), which costs an ordinary key
// nothing to store.
const (
	foldedKey  = "COALESCE(key_folded, key)"
	foldedType = "COALESCE(type_folded, type)"
)

// foldedArg returns what key_folded or type_folded stores for s.
func foldedArg(s string) any {
	if f := domain.FoldCase(s); f != s {
		return f
	}
	return nil
}

// foldBackfillBatch is how many rows the migration folds per statement.
const foldBackfillBatch = 1000

// cacheFoldedMigration returns the migration that adds key_folded and
// type_folded to table and fills them for the rows already there, folding
// in Go, a batch of rows per statement, with the table's triggers off: it
// changes no entry, so the change feed records nothing and no count moves.
// It then indexes the stored folded keys for $eqL and $inL.
//
// Older replicas must be stopped before it runs: they would write keys
// without their folded form (README, "Listing: the CRUD query language").
func cacheFoldedMigration(eng engine.Engine, table string) migrate.Migration {
	return migrate.Migration{
		Name: cacheFoldedMigrationVersion + "_cache_" + table + "_folded",
		Up: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
			return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				if err := addFoldedColumns(ctx, eng, tx, table); err != nil {
					return err
				}
				if err := eng.WithTriggersOff(ctx, tx, table, func() error { return backfillFolded(ctx, tx, table) }); err != nil {
					return err
				}
				if err := execAll(ctx, tx, cacheFoldedIndexDDL(table)); err != nil {
					return fmt.Errorf("bunstore: index the folded key of %s: %w", table, err)
				}
				return nil
			})
		},
		Down: execStep("DROP INDEX IF EXISTS "+engine.QuoteIdent(cacheNamesOf(table).foldedKey),
			"ALTER TABLE "+engine.QuoteIdent(table)+" DROP COLUMN key_folded",
			"ALTER TABLE "+engine.QuoteIdent(table)+" DROP COLUMN type_folded"),
	}
}

// addFoldedColumns adds the two columns unless they are there: SQLite has
// no ADD COLUMN IF NOT EXISTS, and processes racing on one file may both
// run the migration (migrate.go).
func addFoldedColumns(ctx context.Context, eng engine.Engine, tx bun.Tx, table string) error {
	for _, col := range []string{"key_folded", "type_folded"} {
		var n int
		q := eng.ColumnExistsQuery()
		if err := tx.QueryRowContext(ctx, q, table, col).Scan(&n); err != nil {
			return fmt.Errorf("bunstore: look for %s.%s: %w", table, col, err)
		}
		if n > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+engine.QuoteIdent(table)+" ADD COLUMN "+col+" "+eng.TextColumn()); err != nil {
			return fmt.Errorf("bunstore: add %s.%s: %w", table, col, err)
		}
	}
	return nil
}

// backfillFolded fills key_folded and type_folded of table's rows, in the
// order of their ids, a batch at a time; rows whose key and type are
// their own folds keep NULL and are not written.
func backfillFolded(ctx context.Context, tx bun.Tx, table string) error {
	after := ""
	for {
		rows, err := tx.QueryContext(ctx, "SELECT id, key, type FROM ? WHERE id > ? ORDER BY id LIMIT ?",
			bun.Ident(table), after, foldBackfillBatch)
		if err != nil {
			return fmt.Errorf("bunstore: read %s to fold it: %w", table, err)
		}
		var (
			q    strings.Builder
			args = []any{}
			read int
		)
		for rows.Next() {
			var id, key, typ string
			if err := rows.Scan(&id, &key, &typ); err != nil {
				_ = rows.Close()
				return fmt.Errorf("bunstore: read %s to fold it: %w", table, err)
			}
			read++
			after = id
			kf, tf := foldedArg(key), foldedArg(typ)
			if kf == nil && tf == nil {
				continue
			}
			if len(args) > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?)")
			args = append(args, id, kf, tf)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("bunstore: read %s to fold it: %w", table, err)
		}
		if len(args) > 0 {
			stmt := "WITH v (id, kf, tf) AS (VALUES " + q.String() + ") UPDATE ? SET key_folded = v.kf, type_folded = v.tf FROM v WHERE ?.id = v.id"
			if _, err := tx.ExecContext(ctx, stmt, append(args, bun.Ident(table), bun.Ident(table))...); err != nil {
				return fmt.Errorf("bunstore: fold the keys of %s: %w", table, err)
			}
		}
		if read < foldBackfillBatch {
			return nil
		}
	}
}

// cacheFoldedIndexDDL returns the statement that indexes the folded keys
// of live rows, only those stored (keys with capitals); $eqL and $inL find
// the others through the natural key's index (appendFoldedKeyLookup). The
// covering list index stays without key_folded, which made long non-ASCII
// keys outgrow an SQLite index page (docs/benchmarks.md,
// "Case-insensitive operators").
func cacheFoldedIndexDDL(table string) []string {
	n := cacheNamesOf(table)
	t := engine.QuoteIdent(table)
	return []string{
		"CREATE INDEX IF NOT EXISTS " + engine.QuoteIdent(n.foldedKey) + " ON " + t +
			" (key_folded, assignee_id) WHERE key_folded IS NOT NULL AND date_deleted IS NULL",
	}
}
