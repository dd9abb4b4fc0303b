package bunstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/cachegate/cachegate/test/pgtest"
)

func TestAuthMigrationsCreateTheAuthTablesIdempotently(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "auth.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.New(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db, err := Open(ctx, tc.dsn(t))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer db.Close()
			for range 2 {
				if err := Migrate(ctx, db, nil); err != nil {
					t.Fatalf("Migrate: %v", err)
				}
			}
			for _, table := range authTables() {
				var n int
				if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM ?", bun.Ident(table)).Scan(&n); err != nil {
					t.Errorf("table %s: %v", table, err)
				}
			}
			authWantDown(ctx, t, db)
		})
	}
}

// authWantDown runs the down step of the authentication migration and
// checks the tables are gone.
func authWantDown(ctx context.Context, t *testing.T, db *DB) {
	t.Helper()
	migrator := migrate.NewMigrator(db.sql, migrate.NewMigrations())
	for _, m := range authMigrations(db.eng) {
		if err := m.Down(ctx, migrator, &m); err != nil {
			t.Fatalf("down %s: %v", m.Name, err)
		}
	}
	for _, table := range authTables() {
		var n int
		if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM ?", bun.Ident(table)).Scan(&n); err == nil {
			t.Errorf("table %s still exists after the down migration", table)
		}
	}
}
