package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// sampleReader is an ArchiveReader over archiveSample: one user with a
// password hash, one signing key with a private half.
type sampleReader struct{}

func (sampleReader) EachUser(_ context.Context, fn func(domain.User) error) error {
	return fn(*archiveSample()[0].User)
}
func (sampleReader) EachSigningKey(_ context.Context, fn func(domain.SigningKey) error) error {
	return fn(*archiveSample()[1].Key)
}
func (sampleReader) EachRefreshFamily(context.Context, time.Time, func(domain.RefreshFamily) error) error {
	return nil
}
func (sampleReader) EachEntry(context.Context, string, time.Time, func(domain.Entry) error) error {
	return nil
}

type sampleClock struct{}

func (sampleClock) Now() time.Time { return archiveT0 }

// TestExportFileIsReadableByItsOwnerOnly pins README.md, "Moving from
// SQLite to PostgreSQL": the export holds password hashes and private
// signing keys, so the file `export --out` leaves is mode 0600, whether
// it is new or replaces a file readable by others.
func TestExportFileIsReadableByItsOwnerOnly(t *testing.T) {
	t.Parallel()
	a := &application.Archive{Reader: sampleReader{}, Clock: sampleClock{}}
	for name, before := range map[string]os.FileMode{"a new file": 0, "a file readable by all, replaced": 0o644} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "export.jsonl")
			if before != 0 {
				if err := os.WriteFile(path, []byte("old"), before); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, before); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			if err := exportToFile(t.Context(), a, path, io.Discard); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if mode := fi.Mode().Perm(); mode != 0o600 {
				t.Errorf("the export file has mode %v, want -rw-------", mode)
			}
			b, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(b), `"passwordHash"`) {
				t.Fatalf("the file does not hold the export (%v): the mode would guard nothing", err)
			}
			leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".export.jsonl.tmp-*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left behind: %v", leftovers)
			}
		})
	}
}
