package bunstore

import (
	"path/filepath"
	"testing"

	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
	"github.com/cachegate/cachegate/test/pgtest"
)

// changeStore migrates tables a and b (named with prefix) in db.
func changeStore(t *testing.T, db *DB, prefix string) contract.ChangeStore {
	t.Helper()
	name := func(n string) string { return prefix + n }
	if err := Migrate(t.Context(), db, []string{name("a"), name("b")}); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	repos := map[string]ports.CacheRepository{"a": NewCacheRepository(db, name("a")), "b": NewCacheRepository(db, name("b"))}
	return contract.ChangeStore{Log: NewChangeLog(db), Repo: func(n string) ports.CacheRepository { return repos[n] },
		Entity: name}
}

func TestChangeLogSQLiteFile(t *testing.T) {
	t.Parallel()
	contract.ChangeLog(t, func(t *testing.T) contract.ChangeStore {
		return changeStore(t, openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "cache.db")), "entries_")
	})
}

func TestChangeLogSQLiteMemory(t *testing.T) {
	t.Parallel()
	contract.ChangeLog(t, func(t *testing.T) contract.ChangeStore {
		return changeStore(t, openTestDB(t, "sqlite::memory:"), "entries_")
	})
}

func TestChangeLogPostgres(t *testing.T) {
	t.Parallel()
	contract.ChangeLog(t, func(t *testing.T) contract.ChangeStore {
		// The log is one per database: a database per subtest.
		return changeStore(t, openTestDB(t, pgtest.New(t)), "entries_")
	})
}
