package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// engine is the seam between the stores and the database they run on: one
// implementation per database, each with all of its SQL that differs from
// the other's (engine_sqlite.go, engine_postgres.go). The stores ask the
// engine; none of them asks which database it is. docs/storage.md ("One
// engine per database") lists what lives behind it.
//
// Open chooses the engine of a handle (DB) once; the stores and the
// migrations take it from the handle. It is made of one interface per
// concern: the schema, the change log, the quota counts, locks,
// statements, prepared statements and the operations of a whole database.
type engine interface {
	schemaEngine
	changeLogEngine
	quotaEngine
	lockEngine
	statementEngine
	preparedEngine
	operationsEngine
}

// schemaEngine writes the column types and DDL pieces of the migrations.
type schemaEngine interface {
	timeColumn() string       // a time
	textColumn() string       // text compared byte by byte
	bytesColumn() string      // raw bytes
	serialPrimaryKey() string // an integer key the database numbers itself
	// serialRevision is the column definition of a revision number that
	// never reuses a number (the change log's).
	serialRevision() string
	// withoutRowID is the table option of a table keyed by its primary key
	// alone.
	withoutRowID() string
	// tableExistsQuery counts the tables named ? of the schema in use.
	tableExistsQuery() string
	// columnExistsQuery counts the columns named ? (second) of table ?
	// (first).
	columnExistsQuery() string
	// addColumnIfMissing adds column to table unless it is there.
	addColumnIfMissing(ctx context.Context, tx bun.Tx, table, column, typ string) error
	// withTriggersOff runs fn with table's triggers off, in tx.
	withTriggersOff(ctx context.Context, tx bun.Tx, table string, fn func() error) error
	// defineFold defines the database's case fold function, if it needs one
	// (fold.go).
	defineFold(ctx context.Context, db bun.IDB) error
	// lockMigrations takes the migration lock (migrate.go).
	lockMigrations(ctx context.Context, db *bun.DB) (func(), error)
	// retriesMigrationRace reports whether a migration that met a
	// concurrent one's objects runs again (migrate.go).
	retriesMigrationRace() bool
}

// changeLogEngine keeps the change log: its triggers (changes_schema.go)
// and its head (changes.go).
type changeLogEngine interface {
	changesTriggerDDL(table string) []string
	changesTriggerDropDDL(table string) []string
	changesRemovedDDL(table string) []string
	changesRemovedDownDDL(table string) []string
	// changeHead returns what finds the change log's head.
	changeHead() changeHead
}

// quotaEngine keeps and checks the quota counts (usage_schema.go,
// cache_quota.go).
type quotaEngine interface {
	usageTableDDL() []string
	usageTriggerDDL(table string) []string
	usageTriggerDropDDL(table string) []string
	// usageShard is the SQL expression of the shard a write counts in.
	usageShard() string
	// recountLocks are the statements that keep writers of table's counts
	// out while they are counted again (usageKeptMigration).
	recountLocks(table string) []string
	// guarded returns the parts that make a statement write only within g
	// (see CacheRepository.guarded).
	guarded(r *CacheRepository, g *quotaGuard) (with, from, where string, args []any)
}

// lockEngine locks rows, tables and keys for a transaction.
type lockEngine interface {
	forUpdate() string  // locks the rows a SELECT reads until the transaction ends
	skipLocked() string // makes a batch-selecting subquery skip held rows
	lockTableForWriters(ctx context.Context, tx bun.Tx, table string) error
	// lockThrottleKeys serialises the reservations of the login throttle
	// keys names (throttle.go).
	lockThrottleKeys(ctx context.Context, tx bun.Tx, names []string) error
}

// statementEngine writes and runs the statements that differ.
type statementEngine interface {
	// purgeStatement returns the statement that deletes at most limit rows
	// of table that are deleted or expired at now, with its arguments
	// (dialect.go says how each database walks them).
	purgeStatement(table bun.Ident, now time.Time, limit int) (string, []any)
	// purge runs purgeStatement and returns how many rows it removed.
	purge(ctx context.Context, db bun.IDB, table bun.Ident, now time.Time, limit int) (int64, error)
	// positionFunction is the name of the function that finds a substring.
	positionFunction() string
	// boundQuery runs fn on conn, bounding the database's time on it by
	// limit; past it fn's error wraps domain.ErrQueryTooExpensive.
	boundQuery(ctx context.Context, limit time.Duration, conn bun.Conn, fn func(ctx context.Context, db bun.IDB) error) error
	// abortsOnError reports whether a failed statement aborts its
	// transaction (then a statement that may fail runs in a savepoint).
	abortsOnError() bool
	// batchesCreates reports whether a repository batches its creates
	// (create_batch.go); SQLite groups every entry write at its write gate
	// instead (internal/writegate).
	batchesCreates() bool
}

// preparedEngine serves the prepared statements (prepared.go).
type preparedEngine interface {
	// prepares reports whether hot statements are prepared once.
	prepares() bool
	// placeholders rewrites the ? placeholders of q in the database's form.
	placeholders(q string) string
	// time is t as a database/sql argument in the column form of the
	// database (sqlTime is the same for Bun's queries).
	time(t time.Time) any
}

// operationsEngine checks and copies a whole database.
type operationsEngine interface {
	// check reports whether the database can serve (Check, db.go).
	check(ctx context.Context, db *bun.DB) error
	// backup copies the database to path (backup.go).
	backup(ctx context.Context, db *bun.DB, path string) error
}

var (
	_ engine = sqliteEngine{}
	_ engine = postgresEngine{}
)
