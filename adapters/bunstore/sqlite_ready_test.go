package bunstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// fileState is what a write to a file changes.
type fileState struct {
	size  int64
	mtime time.Time
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{fi.Size(), fi.ModTime()}
}

func TestCheckOnSQLiteWritesNothingToTheDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ready.db")
	db := openTestDB(t, "sqlite:"+path)
	repo := migrateTable(t, db, "user_cache")
	for i := range 10 {
		if err := repo.Create(t.Context(), testEntry(i), testNow, domain.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := Check(t.Context(), db); err != nil {
		t.Fatalf("Check on a healthy file: %v", err)
	}
	files := []string{path, path + "-wal"}
	before := map[string]fileState{}
	for _, f := range files {
		before[f] = stateOf(t, f)
	}
	for range 100 {
		if err := Check(t.Context(), db); err != nil {
			t.Fatalf("Check on a healthy file: %v", err)
		}
	}
	for _, f := range files {
		if after := stateOf(t, f); after != before[f] {
			t.Errorf("100 checks changed %s: size %d -> %d, mtime %s -> %s", filepath.Base(f),
				before[f].size, after.size, before[f].mtime, after.mtime)
		}
	}
}

func TestCheckOnSQLiteTestsTheFileSystem(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fs.db")
	db := openTestDB(t, "sqlite:"+path)
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
			err := checkSQLite(t.Context(), db.sql, func(dir string) (fsStat, bool, error) {
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
	db := openTestDB(t, "sqlite::memory:")
	err := checkSQLite(t.Context(), db.sql, func(string) (fsStat, bool, error) {
		t.Error("the check tested a file system for an in-memory database")
		return fsStat{}, false, nil
	})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
}
