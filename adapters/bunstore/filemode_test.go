package bunstore_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"
)

// TestSQLiteFilesArePrivate opens a new SQLite file: it, and the -wal and
// -shm files SQLite makes beside it, are readable by their owner only,
// whatever the umask lets through.
func TestSQLiteFilesArePrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "private.db")
	db := authOpen(t, "sqlite:"+path)
	keys := bunstore.NewKeyStore(db)
	// A write makes SQLite create the -wal and -shm files.
	if err := keys.AddSigningKey(t.Context(), domain.SigningKey{ID: "k1", Algorithm: "EdDSA",
		Private: []byte("seed"), Public: []byte("pub"), DateCreated: domain.Normalize(time.Now())}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatalf("stat %s: %v", filepath.Base(name), err)
		}
		if mode := fi.Mode().Perm(); mode&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group and others", filepath.Base(name), mode)
		}
	}
}
