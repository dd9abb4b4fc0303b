package bunstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/system"
)

// TestBackupFileIsReadableByItsOwnerOnly pins README.md, "Backups": the
// copy holds what the database holds (password hashes, signing keys), so
// it is mode 0600 like the database file, whatever SQLite's VACUUM INTO
// and the umask make of it.
func TestBackupFileIsReadableByItsOwnerOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := authOpen(t, "sqlite:"+filepath.Join(dir, "live.db"))
	if _, err := josejwt.New(t.Context(), josejwt.Options{Keys: bunstore.NewKeyStore(db), Clock: system.Clock{}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "copy.db")
	if err := bunstore.Backup(t.Context(), db, path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 {
		t.Fatal("the backup is empty: its mode would guard nothing")
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("the backup file has mode %v, want -rw-------", mode)
	}
}
