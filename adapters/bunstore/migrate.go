package bunstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// Migration bookkeeping tables, named after the project so a database
// shared with another Bun application keeps the two histories apart.
const (
	migrationsTable     = "cachegate_migrations"
	migrationLocksTable = "cachegate_migration_locks"
)

// migrationLockKey is the PostgreSQL advisory lock key Migrate holds; the
// bytes spell "cachegat".
const migrationLockKey int64 = 0x63616368_65676174

var tableNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ValidateTableName checks that name can be a cache table: lower-case
// letters, digits and underscores, not starting with a digit, at most 63
// bytes (PostgreSQL's identifier limit), and not one of the tables of
// migrations or authentication.
func ValidateTableName(name string) error {
	switch {
	case !tableNameRE.MatchString(name):
		return fmt.Errorf("bunstore: table name %q must match %s", name, tableNameRE)
	case name == migrationsTable || name == migrationLocksTable || name == probeTable || slices.Contains(authTables(), name) ||
		slices.Contains(retiredAuthTables(), name) ||
		slices.Contains(changesTables(), name) || name == usageTable || name == idempotencyTable:
		return fmt.Errorf("bunstore: table name %q is reserved for cachegate's own tables", name)
	}
	return nil
}

// Migrate brings the schema up to date: one cache table per name in tables
// (each its own migration, "20261125000100_cache_<table>", so configuring a
// new entity later adds one), then the authentication tables. Migrations
// already applied are skipped; the history lives in cachegate_migrations.
//
// Several replicas may call Migrate at once. On PostgreSQL they queue on an
// advisory lock, held on a connection of its own while the migrations run on
// others (so the pool needs at least two). On SQLite each migration is one
// IMMEDIATE transaction of idempotent DDL (IF NOT EXISTS) and marking a
// migration applied is an upsert, so processes racing on one file apply
// the same DDL twice, harmlessly.
func Migrate(ctx context.Context, db *DB, tables []string) error {
	return migrateBefore(ctx, db, tables, "")
}

// migrateBefore is Migrate applying only the migrations whose names sort
// before before (every migration when before is empty): the schema of an
// older cachegate, for the tests of a migration that converts data.
func migrateBefore(ctx context.Context, db *DB, tables []string, before string) error {
	if err := validateTables(tables); err != nil {
		return err
	}
	eng := db.eng
	ms := migrate.NewMigrations()
	if len(tables) > 0 {
		ms.Add(changesLogMigration(eng))
		ms.Add(changesAssigneeIndexMigration())
		ms.Add(usageTableMigration(eng))
		ms.Add(idempotencyTableMigration(eng))
		ms.Add(idempotencyKeptMigrationOf(eng))
	}
	for _, t := range tables {
		ms.Add(cacheTableMigration(eng, t))
		ms.Add(cacheListMigration(eng, t))
		ms.Add(cacheCoveringMigration(eng, t))
		ms.Add(changesTriggerMigration(eng, t))
		ms.Add(usageTriggerMigration(eng, t))
		ms.Add(changesRemovedMigration(eng, t))
		if before == "" || usageKeptVersion < before {
			ms.Add(usageKeptMigration(eng, t))
		}
		if before == "" || cacheFoldedMigrationVersion < before {
			ms.Add(cacheFoldedMigration(eng, t))
		}
	}
	for _, m := range authMigrations(eng) {
		if before == "" || m.Name < before {
			ms.Add(m)
		}
	}
	if len(ms.Sorted()) == 0 {
		return nil
	}
	unlock, err := eng.LockMigrations(ctx, db.sql, migrationLockKey)
	if err != nil {
		return err
	}
	defer unlock()

	for try := 1; ; try++ {
		err := runMigrations(ctx, db.sql, ms)
		if err == nil {
			break
		}
		if !eng.RetriesMigrationRace() || !isMigrationRace(err) || try == maxMigrateTries {
			return err
		}
		// A killed migrator's statement may still run (maxMigrateTries):
		// let it end, then run again; every step is idempotent.
		select {
		case <-ctx.Done():
			return dberr.Wrap("migrate", ctx.Err())
		case <-time.After(migrateRacePause):
		}
	}
	return eng.DefineFold(ctx, db.sql, foldFunction)
}

// A killed migrator's last statement goes on running on PostgreSQL after
// its advisory lock was released with its session, and the next migrator
// meets what it creates (isMigrationRace). Migrate runs again after
// migrateRacePause, up to maxMigrateTries times (half a minute in all,
// README, "PostgreSQL and several replicas"); past that the error stands.
const (
	maxMigrateTries  = 60
	migrateRacePause = 500 * time.Millisecond
)

// runMigrations initialises the history table and applies what ms has
// that the history lacks.
func runMigrations(ctx context.Context, db *bun.DB, ms *migrate.Migrations) error {
	m := migrate.NewMigrator(db, ms,
		migrate.WithTableName(migrationsTable),
		migrate.WithLocksTableName(migrationLocksTable),
		migrate.WithMarkAppliedOnSuccess(true),
		migrate.WithUpsert(true))
	if err := m.Init(ctx); err != nil {
		return dberr.Wrap("create the migrations table", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return dberr.Wrap("migrate", err)
	}
	return nil
}

// isMigrationRace reports whether err is what a migration statement
// answers when another backend ran the same statement at the same time.
func isMigrationRace(err error) bool {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return false
	}
	switch pg.Code {
	case "42P07", "42710", dberr.PGUniqueViolation, dberr.PGDeadlockDetected, dberr.PGSerializationFailure:
		return true
	}
	// CREATE OR REPLACE FUNCTION beside another one.
	return pg.Code == "XX000" && strings.Contains(pg.Message, "tuple concurrently updated")
}

// validateTables checks every name and that no two cache tables, nor a
// table and another table's index, share a name.
func validateTables(tables []string) error {
	var errs []error
	seen := make(map[string]bool, len(tables))
	objects := make(map[string]string)
	for _, t := range tables {
		if err := ValidateTableName(t); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[t] {
			errs = append(errs, fmt.Errorf("bunstore: table %q is configured twice", t))
		}
		seen[t] = true
		for _, o := range cacheTableObjects(t) {
			objects[o] = t
		}
	}
	for t := range seen {
		if owner, ok := objects[t]; ok {
			errs = append(errs, fmt.Errorf("bunstore: table name %q is taken by an index of table %q", t, owner))
		}
	}
	return errors.Join(errs...)
}
