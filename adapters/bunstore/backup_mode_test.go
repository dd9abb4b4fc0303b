package bunstore_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/system"
)

// TestBackupFileIsReadableByItsOwnerOnly pins README.md, "Backups": the
// copy holds what the database holds (password hashes, signing keys), so
// it is mode 0600 like the database file, whatever SQLite's VACUUM INTO
// and the umask make of it, from its first byte: a watcher stats the
// file (and a journal SQLite might write beside it) as fast as it can
// while the backup of two megabytes runs, and every mode it sees is 0600.
func TestBackupFileIsReadableByItsOwnerOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := authOpen(t, "sqlite:"+filepath.Join(dir, "live.db"))
	if _, err := josejwt.New(t.Context(), josejwt.Options{Keys: bunstore.NewKeyStore(db), Clock: system.Clock{}}); err != nil {
		t.Fatal(err)
	}
	// Bulk, so the copy takes a while to write.
	for _, q := range []string{"CREATE TABLE bulk (b BLOB)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1024) INSERT INTO bulk SELECT zeroblob(2048) FROM n"} {
		if _, err := db.Bun().ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "copy.db")
	var running atomic.Bool
	running.Store(true)
	seen := make(chan map[fs.FileMode]int)
	go func() {
		modes := map[fs.FileMode]int{}
		for running.Load() {
			for _, name := range []string{path, path + "-journal", path + "-wal"} {
				if fi, err := os.Stat(name); err == nil && running.Load() {
					modes[fi.Mode().Perm()]++
				}
			}
		}
		seen <- modes
	}()
	err := bunstore.Backup(t.Context(), db, path)
	running.Store(false)
	modes := <-seen
	if err != nil {
		t.Fatal(err)
	}
	if len(modes) == 0 {
		t.Fatal("the watcher never saw the file while the backup ran")
	}
	for mode, n := range modes {
		if mode != 0o600 {
			t.Errorf("while the backup ran the file had mode %v (%d times), want -rw-------", mode, n)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 2<<20 {
		t.Fatalf("the backup has %d bytes, not the database's", fi.Size())
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("the backup file has mode %v, want -rw-------", mode)
	}
	if err := bunstore.Backup(t.Context(), db, path); err == nil {
		t.Error("a second backup to the same path overwrote it")
	}
}
