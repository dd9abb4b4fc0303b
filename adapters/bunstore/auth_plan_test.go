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
	err := db.QueryRowContext(t.Context(), "EXPLAIN QUERY PLAN "+bunstore.RevokedFamiliesQuery, "2026-01-01").
		Scan(&id, &parent, &notused, &detail)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(detail, "refresh_families_revoked_at_idx") {
		t.Errorf("query plan %q does not use refresh_families_revoked_at_idx", detail)
	}
}
