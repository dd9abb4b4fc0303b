package bunstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/test/pgtest"
)

// authForEachEngine runs suite once per database kind. newDB, given to
// suite, returns a fresh, migrated and empty database on every call: a
// file in t.TempDir() on SQLite; on PostgreSQL a schema of its own in one
// database per engine run (creating a database per store would cost half
// a second each).
func authForEachEngine(t *testing.T, suite func(t *testing.T, newDB func(t *testing.T) *bunstore.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		suite(t, func(t *testing.T) *bunstore.DB {
			return authOpen(t, "sqlite:"+filepath.Join(t.TempDir(), "auth.db"))
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		base := pgtest.New(t)
		admin := authOpen(t, base)
		var schemas atomic.Int64
		suite(t, func(t *testing.T) *bunstore.DB {
			schema := fmt.Sprintf("auth_%d", schemas.Add(1))
			if _, err := admin.Bun().ExecContext(t.Context(), "CREATE SCHEMA ?", bun.Ident(schema)); err != nil {
				t.Fatalf("create schema: %v", err)
			}
			return authOpen(t, base+"&search_path="+schema)
		})
	})
}

// authOpen opens and migrates the database at dsn, closing it at cleanup.
func authOpen(t *testing.T, dsn string) *bunstore.DB {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	db, err := bunstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := bunstore.Migrate(ctx, db, nil); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}
