package bunstore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cachegate/cachegate/test/pgtest"
)

// TestUsageCountsFollowStatementsOfManyRows writes with statements of many
// rows, as an import or a batch does, and checks cache_usage against a
// count of the table after each: a multi-row INSERT of two assignees, an
// UPDATE that moves some rows to the other assignee and resizes others,
// a soft delete of many rows, and a DELETE of dead rows.
func TestUsageCountsFollowStatementsOfManyRows(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "usage.db")
			if engine == "postgres" {
				dsn = pgtest.New(t)
			}
			db := openTestDB(t, dsn)
			migrateTable(t, db, "usage_cache")
			ctx := t.Context()
			check := func(step string) {
				t.Helper()
				var got, want []struct {
					AssigneeID string
					Entries    int64
					Bytes      int64
				}
				if err := db.NewRaw("SELECT assignee_id, sum(entries) AS entries, sum(bytes) AS bytes FROM cache_usage "+
					"WHERE entity = 'usage_cache' GROUP BY assignee_id HAVING sum(entries) <> 0 OR sum(bytes) <> 0 ORDER BY assignee_id").Scan(ctx, &got); err != nil {
					t.Fatal(err)
				}
				if err := db.NewRaw("SELECT assignee_id, count(*) AS entries, sum(octet_length(data)) AS bytes FROM usage_cache "+
					"WHERE date_deleted IS NULL GROUP BY assignee_id ORDER BY assignee_id").Scan(ctx, &want); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("after %s: counts %v, the table holds %v", step, got, want)
				}
			}
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
						fmt.Sprintf(`"%0*d"`, 1+i%7, i), timeArg(testNow), timeArg(testNow))
				}
				if _, err := db.ExecContext(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
			check("two INSERTs of 500 rows")
			if _, err := db.ExecContext(ctx, "UPDATE usage_cache SET assignee_id = 'a-2' WHERE id < 'id-0100'"); err != nil {
				t.Fatal(err)
			}
			check("an UPDATE moving 100 rows to another assignee")
			if _, err := db.ExecContext(ctx, "UPDATE usage_cache SET data = '\"a much longer value than before\"' WHERE id >= 'id-0900'"); err != nil {
				t.Fatal(err)
			}
			check("an UPDATE resizing 100 rows")
			if _, err := db.ExecContext(ctx, "UPDATE usage_cache SET date_deleted = ? WHERE assignee_id = 'a-1'", timeArg(testNow)); err != nil {
				t.Fatal(err)
			}
			check("a soft delete of an assignee's rows")
			if _, err := db.ExecContext(ctx, "DELETE FROM usage_cache WHERE date_deleted IS NOT NULL OR id < 'id-0050'"); err != nil {
				t.Fatal(err)
			}
			check("a DELETE of dead and live rows")
		})
	}
}
