package e2e

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/pgtest"
)

// schemaTables are tables the default configuration's schema has.
var schemaTables = []string{"user_cache", "users", "refresh_families", "signing_keys", "cachegate_migrations"}

// `cachegate migrate` on an empty database creates the whole schema and
// exits 0; a second run changes nothing.
func TestMigrateCreatesTheSchemaOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// open returns the database URL for the binary and a
		// database/sql handle on the same database.
		open func(t *testing.T, dir string) (url string, db func() *sql.DB)
		// schema lists the database's objects with their definitions.
		schema string
	}{
		{name: "on a fresh SQLite file",
			open: func(t *testing.T, dir string) (string, func() *sql.DB) {
				path := filepath.Join(dir, "fresh.db")
				return "sqlite:" + path, func() *sql.DB {
					// The driver would create a missing file.
					if _, err := os.Stat(path); err != nil {
						t.Fatalf("migrate exited 0 but left no database file: %v", err)
					}
					return openDB(t, "sqlite", path)
				}
			},
			schema: "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name"},
		{name: "on an empty PostgreSQL database",
			open: func(t *testing.T, _ string) (string, func() *sql.DB) {
				url := pgtest.New(t)
				return url, func() *sql.DB { return openDB(t, "pgx", url) }
			},
			schema: "SELECT table_name || '.' || column_name || ': ' || data_type FROM information_schema.columns " +
				"WHERE table_schema = current_schema() ORDER BY table_name, column_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			url, db := tc.open(t, dir)
			snapshot := func() (schema, migrations []string) {
				t.Helper()
				conn := db()
				defer conn.Close()
				return column(t, conn, tc.schema), column(t, conn, "SELECT name FROM cachegate_migrations ORDER BY name")
			}
			if r := runCLI(t, dir, "", nil, "migrate", "--database", url); r.Code != 0 {
				t.Fatalf("first migrate: status %d, stderr %q", r.Code, r.Stderr)
			}
			conn := db()
			var missing []string
			for _, table := range schemaTables {
				if !tableExists(conn, table) {
					missing = append(missing, table)
				}
			}
			conn.Close()
			if len(missing) > 0 {
				t.Fatalf("migrate exited 0 but the database lacks the tables %v", missing)
			}
			schema, migrations := snapshot()
			if len(migrations) == 0 {
				t.Error("no migration recorded")
			}

			if r := runCLI(t, dir, "", nil, "migrate", "--database", url); r.Code != 0 {
				t.Fatalf("second migrate: status %d, stderr %q", r.Code, r.Stderr)
			}
			schema2, migrations2 := snapshot()
			if !slices.Equal(schema, schema2) || !slices.Equal(migrations, migrations2) {
				t.Errorf("the second migrate changed the database:\nschema %v\nthen   %v\nmigrations %v\nthen       %v",
					schema, schema2, migrations, migrations2)
			}
		})
	}
}

func openDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// tableExists reports whether a query on table succeeds.
func tableExists(db *sql.DB, table string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, "SELECT 1 FROM "+table+" WHERE 1 = 0")
	if err != nil {
		return false
	}
	rows.Close()
	return true
}

// column returns the one text column of query's rows.
func column(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
