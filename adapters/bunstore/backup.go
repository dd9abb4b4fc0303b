package bunstore

import (
	"context"
)

// Backup writes a consistent copy of an SQLite database to a new file at
// path with VACUUM INTO, while the database serves: the copy is one read
// transaction's snapshot, so it holds every write committed before the
// backup began and none half-done, and is compact (no WAL to go with it).
// The file has mode 0600 from its first byte. An existing path is refused,
// never overwritten.
// PostgreSQL has its own tools (pg_dump, pg_basebackup): Backup refuses it.
func Backup(ctx context.Context, db *DB, path string) error {
	return db.eng.Backup(ctx, db.sql, path)
}
