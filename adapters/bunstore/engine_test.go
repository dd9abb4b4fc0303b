package bunstore

import (
	"path/filepath"
	"testing"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestATableNamedAfterAKeywordIsMigratedAndWritten: every engine quotes a
// table's name the one way (engine.QuoteIdent), in its triggers too, so a cache
// table named after an SQL keyword migrates, and its writes reach the
// change log and the quota counts, on both databases.
func TestATableNamedAfterAKeywordIsMigratedAndWritten(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "order.db") },
		"postgres": func(t *testing.T) string { return pgtest.New(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := openTestDB(t, dsn(t))
			r := migrateTable(t, db, "order")
			ctx := t.Context()
			e := testEntry(1)
			if err := r.Create(ctx, e, testNow, domain.Quota{MaxEntries: 10}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Update(ctx, e.ID, testNow, domain.Quota{MaxEntries: 10}, func(e *domain.Entry) error {
				e.Data = []byte(`"updated"`)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Delete(ctx, e.ID, testNow, func(domain.Entry) error { return nil }); err != nil {
				t.Fatal(err)
			}
			changes, err := NewChangeLog(db).Changes(ctx, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []domain.ChangeKind
			for _, c := range changes {
				kinds = append(kinds, c.Kind)
			}
			if len(kinds) != 3 || kinds[0] != domain.ChangeCreated || kinds[1] != domain.ChangeUpdated || kinds[2] != domain.ChangeDeleted {
				t.Fatalf("changes %v, want created, updated, deleted", kinds)
			}
		})
	}
}
