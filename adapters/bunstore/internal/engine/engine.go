// Package engine holds what differs between SQLite and PostgreSQL: one
// Engine per database with its SQL (sqlite.go, postgres.go), the time
// arguments of queries (time.go) and the prepared statements
// (prepared.go); docs/storage.md, "One engine per database". The engines
// know no store: the schema objects their triggers write (Names) and the
// values of a statement come as arguments.
package engine

import (
	"context"
	"math"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/domain"
)

// Engine is the seam between the stores and the database they run on:
// bunstore.Open chooses the engine of a handle once, and no store asks
// which database it is. It is made of one interface per concern.
type Engine interface {
	schemaEngine
	changeLogEngine
	quotaEngine
	lockEngine
	statementEngine
	preparedEngine
	operationsEngine
}

// Names are the schema objects of the stores that the engines' triggers
// and statements write to.
type Names struct {
	// Changes is the change log's table, ChangeColumns the columns its
	// triggers fill besides at, ChangesSequence PostgreSQL's sequence of
	// its revisions.
	Changes, ChangeColumns, ChangesSequence string
	// Usage is the table of the quota counts.
	Usage string
}

// SQLite returns SQLite's engine of the schema names n.
func SQLite(n Names) Engine { return sqliteEngine{n} }

// Postgres returns PostgreSQL's engine of the schema names n.
func Postgres(n Names) Engine { return postgresEngine{n} }

// Guard is a write under a quota: it grows the counts of Assignee by
// Entries and Bytes (domain.Growth), which Quota limits.
type Guard struct {
	Quota          domain.Quota
	Assignee       string
	Entries, Bytes int64
}

// limits returns the limits to compare the count plus the growth with:
// the quota's, or for a count that is not limited or does not grow, one
// that nothing passes.
func (g Guard) limits() (entries, bytes int64) {
	entries, bytes = math.MaxInt64, math.MaxInt64
	if g.Entries > 0 && g.Quota.MaxEntries > 0 {
		entries = g.Quota.MaxEntries
	}
	if g.Bytes > 0 && g.Quota.MaxBytes > 0 {
		bytes = g.Quota.MaxBytes
	}
	return entries, bytes
}

// ChangeHead finds the change log's head, the last revision up to which
// every revision that will ever exist is readable.
type ChangeHead interface {
	// Read returns the head.
	Read(ctx context.Context, db *bun.DB) (int64, error)
	// Trails reports whether revisions past the head may be readable
	// already (then Changes reads up to the head only).
	Trails() bool
	// Pending reports whether revisions are waiting for transactions in
	// flight to end.
	Pending() bool
}

// schemaEngine writes the column types and DDL pieces of the migrations.
type schemaEngine interface {
	TimeColumn() string       // a time
	TextColumn() string       // text compared byte by byte
	BytesColumn() string      // raw bytes
	SerialPrimaryKey() string // an integer key the database numbers itself
	// SerialRevision is the column definition of a revision number that
	// never reuses a number (the change log's).
	SerialRevision() string
	// WithoutRowID is the table option of a table keyed by its primary key
	// alone.
	WithoutRowID() string
	// TableExistsQuery counts the tables named ? of the schema in use.
	TableExistsQuery() string
	// ColumnExistsQuery counts the columns named ? (second) of table ?
	// (first).
	ColumnExistsQuery() string
	// AddColumnIfMissing adds column to table unless it is there.
	AddColumnIfMissing(ctx context.Context, tx bun.Tx, table, column, typ string) error
	// WithTriggersOff runs fn with table's triggers off, in tx.
	WithTriggersOff(ctx context.Context, tx bun.Tx, table string, fn func() error) error
	// DefineFold defines the case fold function named name, if the
	// database needs one (bunstore's fold.go).
	DefineFold(ctx context.Context, db bun.IDB, name string) error
	// LockMigrations takes the migration lock, whose key is key.
	LockMigrations(ctx context.Context, db *bun.DB, key int64) (func(), error)
	// RetriesMigrationRace reports whether a migration that met a
	// concurrent one's objects runs again (bunstore's Migrate).
	RetriesMigrationRace() bool
}

// changeLogEngine keeps the change log: its triggers and its head.
type changeLogEngine interface {
	ChangesTriggerDDL(table string) []string
	ChangesTriggerDropDDL(table string) []string
	ChangesRemovedDDL(table string) []string
	ChangesRemovedDownDDL(table string) []string
	// ChangeHead returns what finds the change log's head.
	ChangeHead() ChangeHead
}

// quotaEngine keeps and checks the quota counts.
type quotaEngine interface {
	UsageTableDDL() []string
	UsageTriggerDDL(table string) []string
	UsageTriggerDropDDL(table string) []string
	// UsageShard is the SQL expression of the shard a write counts in.
	UsageShard() string
	// RecountLocks are the statements that keep the writers of tables
	// out while counts are counted again; tables come in the order
	// writers take them.
	RecountLocks(tables ...string) []string
	// Guarded returns the parts that make a statement write to entity
	// only within g: with is its prefix, from its FROM item, where is
	// ANDed to its WHERE.
	Guarded(entity string, g Guard) (with, from, where string, args []any)
}

// lockEngine locks rows, tables and keys for a transaction.
type lockEngine interface {
	ForUpdate() string  // locks the rows a SELECT reads until the transaction ends
	SkipLocked() string // makes a batch-selecting subquery skip held rows
	LockTableForWriters(ctx context.Context, tx bun.Tx, table string) error
	// LockThrottleKeys serialises the reservations of the login throttle
	// keys names, in the lock class class.
	LockThrottleKeys(ctx context.Context, tx bun.Tx, class int32, names []string) error
}

// statementEngine writes and runs the statements that differ.
type statementEngine interface {
	// PurgeStatement returns the statement that deletes at most limit rows
	// of table that are deleted or expired at now, with its arguments. A
	// batch takes the rows of two ordered index walks (soft-deleted, then
	// expired rows), so every batch of a long sweep costs the same, where a
	// scan of the dead rows would make a sweep of a backlog quadratic.
	PurgeStatement(table bun.Ident, now time.Time, limit int) (string, []any)
	// Purge runs PurgeStatement and returns how many rows it removed.
	Purge(ctx context.Context, db bun.IDB, table bun.Ident, now time.Time, limit int) (int64, error)
	// PositionFunction is the name of the function that finds a substring.
	PositionFunction() string
	// BoundQuery runs fn on conn, bounding the database's time on it by
	// limit; past it fn's error wraps domain.ErrQueryTooExpensive.
	BoundQuery(ctx context.Context, limit time.Duration, conn bun.Conn, fn func(ctx context.Context, db bun.IDB) error) error
	// AbortsOnError reports whether a failed statement aborts its
	// transaction (then a statement that may fail runs in a savepoint).
	AbortsOnError() bool
	// BatchesCreates reports whether a repository batches its creates
	// (bunstore's create_batch.go); SQLite groups every entry write at its
	// write gate instead (internal/writegate).
	BatchesCreates() bool
}

// preparedEngine serves the prepared statements (prepared.go).
type preparedEngine interface {
	// Prepares reports whether hot statements are prepared once.
	Prepares() bool
	// Placeholders rewrites the ? placeholders of q in the database's form.
	Placeholders(q string) string
	// Time is t as a database/sql argument in the column form of the
	// database (TimeArg is the same for Bun's queries).
	Time(t time.Time) any
}

// operationsEngine checks and copies a whole database.
type operationsEngine interface {
	// Check reports whether the database can serve (bunstore.Check).
	Check(ctx context.Context, db *bun.DB) error
	// Backup copies the database to path (bunstore.Backup).
	Backup(ctx context.Context, db *bun.DB, path string) error
}
