package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
)

// minFreeBytes is the room the file system holding an SQLite database must
// have for the readiness check to pass: the largest entry write (its data
// in the row and in the change log) twice over, so the check reports the
// storage full a little before writes fail (README, "What the API does").
const minFreeBytes = 1 << 20

// fsStat is what the readiness check needs to know of a file system.
type fsStat struct {
	// avail is the number of bytes an unprivileged process may still
	// write (statfs's available blocks, not its free ones).
	avail uint64
	// readOnly is set when the file system is mounted read-only.
	readOnly bool
}

// statFunc reads the fsStat of the file system holding dir; ok is false
// where the platform cannot tell (statfs_other.go), and the space is then
// not tested.
type statFunc func(dir string) (st fsStat, ok bool, err error)

// checkSQLite is Check on SQLite. It writes nothing, so a probe a second
// costs no WAL growth: it reads the schema and stats the file system
// holding the file (none for an in-memory database).
func checkSQLite(ctx context.Context, db *bun.DB, stat statFunc) error {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return dberr.Wrap("check the database", err)
	}
	path, err := sqliteFile(ctx, db)
	if err != nil || path == "" {
		return err
	}
	st, ok, err := stat(filepath.Dir(path))
	switch {
	case err != nil:
		return &dberr.Outage{Kind: domain.ErrDatabaseUnavailable, Cause: fmt.Errorf("bunstore: test the database's file system: %w", err)}
	case !ok:
		return nil
	case st.readOnly:
		return &dberr.Outage{Kind: domain.ErrDatabaseUnavailable, Cause: errors.New("bunstore: the database's file system is read-only")}
	case st.avail < minFreeBytes:
		return &dberr.Outage{Kind: domain.ErrStorageFull, Cause: errors.New("bunstore: the database's file system has " +
			strconv.FormatUint(st.avail, 10) + " bytes available, below the " + strconv.Itoa(minFreeBytes) + " a write may need")}
	}
	return nil
}

// sqliteFile returns the path of db's main database file, "" when it is in
// memory.
func sqliteFile(ctx context.Context, db *bun.DB) (string, error) {
	rows, err := db.QueryContext(ctx, "PRAGMA database_list")
	if err != nil {
		return "", dberr.Wrap("check the database", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq        int
			name, file string
		)
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", dberr.Wrap("check the database", err)
		}
		if name == "main" {
			return file, nil
		}
	}
	if err := rows.Err(); err != nil {
		return "", dberr.Wrap("check the database", err)
	}
	return "", nil
}
