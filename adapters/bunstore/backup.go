package bunstore

import (
	"context"
)

// Backup writes a consistent copy of an SQLite database to a new file at
// path with VACUUM INTO, while the database serves: the copy is one read
// transaction's snapshot, compact (no WAL to go with it), mode 0600 from
// its first byte. An existing path is refused, never overwritten.
// PostgreSQL has its own tools (pg_dump, pg_basebackup): Backup refuses it.
func Backup(ctx context.Context, db *DB, path string) error {
	return db.eng.Backup(ctx, db.sql, path)
}
