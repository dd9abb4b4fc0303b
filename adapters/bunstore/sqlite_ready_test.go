package bunstore

import (
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
