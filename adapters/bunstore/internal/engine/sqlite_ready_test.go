package engine

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite"

	"github.com/cachegate/cachegate/domain"
)

// openSQLite opens the SQLite database uri for a test of the readiness
// check.
func openSQLite(t *testing.T, uri string) *bun.DB {
	t.Helper()
	sqldb, err := sql.Open("sqlite", uri)
	if err != nil {
		t.Fatal(err)
	}
	sqldb.SetMaxOpenConns(1)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestCheckOnSQLiteTestsTheFileSystem(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fs.db")
	db := openSQLite(t, "file:"+path)
	for name, c := range map[string]struct {
		st   fsStat
		ok   bool
		err  error
		want *domain.Error
	}{
		"room for a write is ready":                        {fsStat{avail: minFreeBytes}, true, nil, nil},
		"less room than a write may need is full":          {fsStat{avail: minFreeBytes - 1}, true, nil, domain.ErrStorageFull},
		"a full disk is full":                              {fsStat{avail: 0}, true, nil, domain.ErrStorageFull},
		"a read-only file system is unavailable":           {fsStat{avail: 1 << 30, readOnly: true}, true, nil, domain.ErrDatabaseUnavailable},
		"a file system that cannot be read is unavailable": {fsStat{}, false, errors.New("statfs: input/output error"), domain.ErrDatabaseUnavailable},
		"a platform without statfs tests no space":         {fsStat{}, false, nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var asked string
			err := checkSQLite(t.Context(), db, func(dir string) (fsStat, bool, error) {
				asked = dir
				return c.st, c.ok, c.err
			})
			if asked != filepath.Dir(path) {
				t.Errorf("the check tested %q, want the database's directory %q", asked, filepath.Dir(path))
			}
			if c.want == nil {
				if err != nil {
					t.Fatalf("check: %v, want ready", err)
				}
				return
			}
			if !errors.Is(err, c.want) || domain.KindOf(err) != c.want.Kind {
				t.Fatalf("check: %v, want %v", err, c.want)
			}
		})
	}
}

func TestCheckOnSQLiteReadsTheRealFileSystem(t *testing.T) {
	t.Parallel()
	st, ok, err := statFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ok && st.avail == 0 {
		t.Errorf("statfs says the test's temporary directory has no room: %+v", st)
	}
}

func TestCheckOnAnInMemorySQLiteTestsNoFileSystem(t *testing.T) {
	t.Parallel()
	db := openSQLite(t, "file::memory:")
	err := checkSQLite(t.Context(), db, func(string) (fsStat, bool, error) {
		t.Error("the check tested a file system for an in-memory database")
		return fsStat{}, false, nil
	})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
}
