package bunstore

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestUsageCountsFollowStatementsOfManyRows writes with statements of many
// rows, as an import or a batch does, and checks cache_usage against a
// count of the table and the change log after each: a multi-row INSERT
// of two assignees, an UPDATE that moves some rows to the other assignee
// and resizes others, a soft delete of many rows, a DELETE of dead rows,
// and a prune of the log.
func TestUsageCountsFollowStatementsOfManyRows(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "usage.db")
			if name == "postgres" {
				dsn = pgtest.New(t)
			}
			db := openTestDB(t, dsn)
			migrateTable(t, db, "usage_cache")
			ctx := t.Context()
			check := func(step string) { t.Helper(); checkUsage(t, db, "usage_cache", step) }
			// 1000 rows in two statements of 500, assignees 0 and 1.
			for from := 0; from < 1000; from += 500 {
				q := "INSERT INTO usage_cache (id, key, type, assignee_id, data, version, date_created, date_updated) VALUES "
				var args []any
				for i := from; i < from+500; i++ {
					if i > from {
						q += ", "
					}
					q += "(?, ?, 't', ?, ?, 1, ?, ?)"
					args = append(args, fmt.Sprintf("id-%04d", i), fmt.Sprintf("k-%04d", i), fmt.Sprintf("a-%d", i%2),
						fmt.Sprintf(`"%0*d"`, 1+i%7, i), engine.TimeArg(testNow), engine.TimeArg(testNow))
				}
				if _, err := db.sql.ExecContext(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
			check("two INSERTs of 500 rows")
			if _, err := db.sql.ExecContext(ctx, "UPDATE usage_cache SET assignee_id = 'a-2' WHERE id < 'id-0100'"); err != nil {
				t.Fatal(err)
			}
			check("an UPDATE moving 100 rows to another assignee")
			if _, err := db.sql.ExecContext(ctx, "UPDATE usage_cache SET data = '\"a much longer value than before\"' WHERE id >= 'id-0900'"); err != nil {
				t.Fatal(err)
			}
			check("an UPDATE resizing 100 rows")
			if _, err := db.sql.ExecContext(ctx, "UPDATE usage_cache SET date_deleted = ? WHERE assignee_id = 'a-1'", engine.TimeArg(testNow)); err != nil {
				t.Fatal(err)
			}
			check("a soft delete of an assignee's rows")
			if _, err := db.sql.ExecContext(ctx, "DELETE FROM usage_cache WHERE date_deleted IS NOT NULL OR id < 'id-0050'"); err != nil {
				t.Fatal(err)
			}
			check("a DELETE of dead and live rows")
			if _, err := NewChangeLog(db).Prune(ctx, testNow.Add(24*time.Hour*365*100), 700); err != nil {
				t.Fatal(err)
			}
			check("a prune of part of the log")
		})
	}
}

// checkUsage fails t unless cache_usage holds for table what table and the
// log keep: every row until removed, and every change the log keeps.
func checkUsage(t *testing.T, db *DB, table, step string) {
	t.Helper()
	var got, want []struct {
		AssigneeID string
		Entries    int64
		Bytes      int64
	}
	if err := db.sql.NewRaw("SELECT assignee_id, sum(entries) AS entries, sum(bytes) AS bytes FROM cache_usage "+
		"WHERE entity = ? GROUP BY assignee_id HAVING sum(entries) <> 0 OR sum(bytes) <> 0 ORDER BY assignee_id", table).Scan(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	if err := db.sql.NewRaw("SELECT assignee_id, sum(n) AS entries, sum(b) AS bytes FROM ("+
		"SELECT assignee_id, 1 AS n, octet_length(data) AS b FROM ?"+
		" UNION ALL SELECT assignee_id, 0, "+engine.ChangeCost(changesTable)+" FROM "+changesTable+" WHERE entity = ?"+
		" UNION ALL SELECT assignee_id, 0, cost FROM "+idempotencyTable+" WHERE entity = ?"+
		") kept GROUP BY assignee_id HAVING sum(n) <> 0 OR sum(b) <> 0 ORDER BY assignee_id",
		bun.Ident(table), table, table).Scan(t.Context(), &want); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after %s: counts %v, kept %v", step, got, want)
	}
}

// TestUsageKeptMigrationCountsWhatADatabaseAlreadyKeeps writes entries,
// deletes some and keeps their changes under the counting of before
// (deleted rows and changes uncounted), then migrates: the counts then
// hold every row and change, and writes go on counting them.
func TestUsageKeptMigrationCountsWhatADatabaseAlreadyKeeps(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "usage.db")
			if name == "postgres" {
				dsn = pgtest.New(t)
			}
			db := openTestDB(t, dsn)
			if err := migrateBefore(t.Context(), db, []string{"kept_cache"}, usageKeptVersion); err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			for i := range 20 {
				if _, err := db.sql.ExecContext(ctx, "INSERT INTO kept_cache (id, key, type, assignee_id, data, version, date_created, date_updated) "+
					"VALUES (?, ?, 't', ?, ?, 1, ?, ?)", fmt.Sprintf("id-%02d", i), fmt.Sprintf("k-%02d", i), fmt.Sprintf("a-%d", i%3),
					fmt.Sprintf(`"%0*d"`, 1+i, i), engine.TimeArg(testNow), engine.TimeArg(testNow)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.sql.ExecContext(ctx, "UPDATE kept_cache SET date_deleted = ? WHERE id < 'id-05'", engine.TimeArg(testNow)); err != nil {
				t.Fatal(err)
			}
			if err := Migrate(ctx, db, []string{"kept_cache"}); err != nil {
				t.Fatal(err)
			}
			checkUsage(t, db, "kept_cache", "the migration")
			if _, err := db.sql.ExecContext(ctx, "DELETE FROM kept_cache WHERE id < 'id-08'"); err != nil {
				t.Fatal(err)
			}
			checkUsage(t, db, "kept_cache", "a DELETE after the migration")
		})
	}
}
