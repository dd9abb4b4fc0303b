package bunstore_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
)

// TestRevokedFamiliesUsesTheRevokedIndex pins the query every replica runs
// twice a second: on SQLite it searches the partial index of revoked
// families, never scanning the table.
func TestRevokedFamiliesUsesTheRevokedIndex(t *testing.T) {
	t.Parallel()
	db := authOpen(t, "sqlite:"+filepath.Join(t.TempDir(), "plan.db"))
	var id, parent, notused int
	var detail string
	err := db.Bun().QueryRowContext(t.Context(), "EXPLAIN QUERY PLAN "+bunstore.RevokedFamiliesQuery, "2026-01-01").
		Scan(&id, &parent, &notused, &detail)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(detail, "refresh_families_revoked_at_idx") {
		t.Errorf("query plan %q does not use refresh_families_revoked_at_idx", detail)
	}
}

// TestEvictionReadsTheLiveIndex pins what a login beyond
// --max-sessions-per-user reads: on SQLite both the families it revokes
// and those it keeps are found in the partial index of unrevoked ones,
// so the revoked families a login loop leaves behind are never read.
func TestEvictionReadsTheLiveIndex(t *testing.T) {
	t.Parallel()
	db := authOpen(t, "sqlite:"+filepath.Join(t.TempDir(), "plan.db"))
	rows, err := db.Bun().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+bunstore.EvictQuery,
		"2026-01-01", "u1", "2026-01-01", "u1", "2026-01-01", 100)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	uses := 0
	for _, d := range plan {
		if strings.Contains(d, "refresh_families_live_idx") {
			uses++
		}
		if strings.HasPrefix(d, "SCAN refresh_families") && !strings.Contains(d, "INDEX") {
			t.Errorf("the eviction scans the table: %q", d)
		}
	}
	if uses < 2 {
		t.Errorf("query plan %q reads refresh_families_live_idx %d times, want for the revoked and the kept", plan, uses)
	}
}
