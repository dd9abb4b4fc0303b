package bunstore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
	"github.com/cachegate/cachegate/test/pgtest"
)

// openTestDB opens dsn for the test's lifetime.
func openTestDB(t testing.TB, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// migrateTable creates table in db and returns its repository.
func migrateTable(t testing.TB, db *DB, table string) *CacheRepository {
	t.Helper()
	if err := Migrate(context.Background(), db, []string{table}); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return NewCacheRepository(db, table)
}

func TestCacheRepositorySQLiteFile(t *testing.T) {
	t.Parallel()
	contract.CacheRepository(t, func(t *testing.T) ports.CacheRepository {
		db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "cache.db"))
		return migrateTable(t, db, "user_cache")
	})
}

func TestCacheRepositorySQLiteMemory(t *testing.T) {
	t.Parallel()
	contract.CacheRepository(t, func(t *testing.T) ports.CacheRepository {
		return migrateTable(t, openTestDB(t, "sqlite::memory:"), "user_cache")
	})
}

func TestCacheRepositoryPostgres(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, pgtest.New(t))
	var n atomic.Int64
	contract.CacheRepository(t, func(t *testing.T) ports.CacheRepository {
		// One database, a table per subtest: creating a database per
		// subtest would cost more than the subtest.
		return migrateTable(t, db, fmt.Sprintf("cache_%d", n.Add(1)))
	})
}
