package bunstore

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

// The replay of one assignee's changes is served by the index on
// (assignee_id, rev) on both databases (ChangesOf), not by a scan of the
// log's revision range.
func TestReplayOfOneAssigneeUsesItsIndex(t *testing.T) {
	t.Parallel()
	q, args := changesOfQuery(ports.ChangeQuery{Entity: "plan_cache", AssigneeID: "someone", Type: "t", After: 0, Upto: 1000, Limit: 500})
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "plan.db"))
		if err := Migrate(t.Context(), db, []string{"plan_cache"}); err != nil {
			t.Fatal(err)
		}
		rows, err := db.sql.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if got := strings.Join(plan, "; "); !strings.Contains(got, changesAssigneeIndex) {
			t.Fatalf("plan = %s, want it to use %s", got, changesAssigneeIndex)
		}
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		db := openTestDB(t, pgtest.New(t))
		if err := Migrate(t.Context(), db, []string{"plan_cache"}); err != nil {
			t.Fatal(err)
		}
		tx, err := db.sql.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		// An empty table: tell the planner a scan is not an option, so the
		// test shows the index can serve the query at all.
		if _, err := tx.ExecContext(t.Context(), "SET LOCAL enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		var plan []string
		rows, err := tx.QueryContext(t.Context(), "EXPLAIN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if got := strings.Join(plan, "; "); !strings.Contains(got, changesAssigneeIndex) {
			t.Fatalf("plan = %s, want it to use %s", got, changesAssigneeIndex)
		}
	})
}
