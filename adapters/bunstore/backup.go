package bunstore

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/uptrace/bun"
)

// Backup writes a consistent copy of an SQLite database to a new file at
// path with VACUUM INTO, while the database serves: the copy is one read
// transaction's snapshot, so it holds every write committed before the
// backup began and none half-done, and is compact (no WAL to go with it).
// The file gets mode 0600. An existing path is refused, never overwritten.
// PostgreSQL has its own tools (pg_dump, pg_basebackup): Backup refuses it.
func Backup(ctx context.Context, db *bun.DB, path string) error {
	if isPostgres(db) {
		return errors.New("backup copies SQLite databases; for PostgreSQL use pg_dump or pg_basebackup")
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists; backup writes a new file only", path)
	}
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return translate(ctx, dbError("copy the database", err))
	}
	return os.Chmod(path, 0o600)
}
