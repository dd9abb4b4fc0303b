package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/readcache"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"

	// The pure-Go SQLite driver; docs/storage.md has the measurements
	// behind choosing it over mattn/go-sqlite3.
	"modernc.org/sqlite"
)

// DB is the handle of one database, which every store is made from: it
// owns the connection pool, the engine of the database (chosen once, by
// Open), SQLite's write gate and group of entry writes, and the bounds of
// every call (the time bounds and the bound on each caller's calls). The
// stores share it; none of them asks which database it runs on.
type DB struct {
	sql *bun.DB
	eng engine.Engine
	// gate queues the writers of an SQLite database (internal/writegate); nil
	// on PostgreSQL, whose writers lock rows.
	gate chan struct{}
	// entries groups the entry writes at the gate (internal/writegate); nil
	// without a gate.
	entries *batch.Batcher[writegate.Write]
	bounds  bound.Bounds
	// ungrouped runs every entry write on its own (WithUngroupedWrites).
	ungrouped bool
	// watch tells whether an SQLite file changed since a read
	// (internal/readcache; cache_read.go); nil on PostgreSQL and for
	// sqlite::memory:.
	watch *readcache.Watch
	// hooked is set when the handle has query hooks (tracing), which only
	// Bun's own queries run.
	hooked bool
}

// Bun returns the Bun handle, for tools and tests that run SQL of their
// own; the stores need none.
func (db *DB) Bun() *bun.DB { return db.sql }

// Close closes the connection pool.
func (db *DB) Close() error {
	if db.watch != nil {
		_ = db.watch.Close()
	}
	return db.sql.Close()
}

// Option tunes Open.
type Option func(*openConfig)

type openConfig struct {
	maxOpenConns   int
	connectTimeout time.Duration
	bounds         bound.Bounds
	ungrouped      bool
	callerBound    bool
	perCaller      int
	budget         *Budget
	hooks          []bun.QueryHook
}

// WithMaxOpenConns sets the size of the connection pool, overriding the
// default of the database kind (see Open). It is ignored for sqlite::memory:,
// which must use one connection.
func WithMaxOpenConns(n int) Option {
	return func(c *openConfig) { c.maxOpenConns = n }
}

// WithConnectTimeout bounds each attempt to connect to PostgreSQL, per
// host of a multi-host URL, when the URL sets no connect_timeout; zero or
// less means DefaultTimeout. SQLite opens files and ignores it.
func WithConnectTimeout(d time.Duration) Option {
	return func(c *openConfig) { c.connectTimeout = d }
}

// WithQueryHook adds h to the handle's query hooks (tracing).
func WithQueryHook(h bun.QueryHook) Option {
	return func(c *openConfig) { c.hooks = append(c.hooks, h) }
}

// sqliteParams are the connection settings of every SQLite connection: a
// write waits up to 5 s for the writer before it fails with SQLITE_BUSY,
// foreign keys are enforced, and transactions take the write lock when they
// begin (BEGIN IMMEDIATE), so a transaction never fails half-way upgrading
// from reader to writer. The driver applies them to each new connection.
const sqliteParams = "_busy_timeout=5000&_foreign_keys=1&_txlock=immediate"

// sqliteFileParams are added for files: WAL lets readers run beside the
// writer, and synchronous=NORMAL is durable at every checkpoint and never
// corrupts (a power cut may lose the last commits).
const sqliteFileParams = "&_journal_mode=WAL&_synchronous=NORMAL"

// Open connects to the database named by dsn and returns its handle, ready
// for Migrate and the stores. The forms accepted are:
//
//   - sqlite:PATH — an SQLite file, created when missing, in WAL mode with
//     synchronous=NORMAL, a 5 s busy timeout and foreign keys on. WAL lets
//     readers run in parallel with the one writer, so the pool holds
//     max(4, 2×GOMAXPROCS) connections; a process's writes queue at the
//     handle's write gate and entry writes commit in groups
//     (internal/writegate; docs/storage.md has the measurements).
//   - sqlite::memory: — a private in-memory SQLite database. It lives in one
//     connection, so the pool is that one connection, never recycled, and
//     callers queue for it.
//   - postgres://… or postgresql://… — PostgreSQL through pgx's
//     database/sql driver, with a pool of 4×GOMAXPROCS connections.
//
// Errors never repeat dsn, which may hold a password.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	var cfg openConfig
	for _, o := range opts {
		o(&cfg)
	}
	var (
		db  *DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(dsn, cfg)
	case dsn == "sqlite::memory:":
		db, err = openSQLite("file::memory:?"+sqliteParams, true, cfg)
	case strings.HasPrefix(dsn, "sqlite:"):
		db, err = openSQLiteFile(strings.TrimPrefix(dsn, "sqlite:"), cfg)
	default:
		return nil, errors.New("bunstore: unsupported database URL: want sqlite:PATH, sqlite::memory: or postgres://…")
	}
	if err != nil {
		return nil, err
	}
	if err := db.sql.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("bunstore: connect to the database: %w", err)
	}
	for _, h := range cfg.hooks {
		db.sql.AddQueryHook(h)
	}
	db.hooked = len(cfg.hooks) > 0
	db.bounds, db.ungrouped = fillBounds(cfg.bounds), cfg.ungrouped
	if cfg.callerBound {
		db.bounds.Callers = callers.New(db.sql.DB.Stats().MaxOpenConnections, cfg.perCaller, cfg.budget)
	}
	if db.watch != nil {
		db.watch.Timeout = db.bounds.Timeout
	}
	return db, nil
}

func openSQLiteFile(path string, cfg openConfig) (*DB, error) {
	if path == "" {
		return nil, errors.New("bunstore: sqlite: needs a file path, as in sqlite:cachegate.db")
	}
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	// The path goes into an SQLite URI, where these three bytes are syntax.
	path = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return openSQLite("file:"+path+"?"+sqliteParams+sqliteFileParams, false, cfg)
}

// createPrivate creates the database file readable by its owner only
// (0600), unless it exists: it holds password hashes and signing keys.
// SQLite gives the -wal and -shm files it creates beside it the main
// file's mode. An existing file keeps the mode it has (README says how to
// tighten it).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return fmt.Errorf("bunstore: create the SQLite file: %w", err)
	}
	return f.Close()
}

func openSQLite(uri string, memory bool, cfg openConfig) (*DB, error) {
	engine.RegisterSQLiteFold(foldFunction)
	conn, err := sqlite.NewConnector(uri)
	if err != nil {
		return nil, fmt.Errorf("bunstore: open SQLite: %w", err)
	}
	sqldb := sql.OpenDB(conn)
	switch {
	case memory:
		sqldb.SetMaxOpenConns(1)
		sqldb.SetMaxIdleConns(1)
		sqldb.SetConnMaxLifetime(0)
		sqldb.SetConnMaxIdleTime(0)
	default:
		setPool(sqldb, cfg.maxOpenConns, max(4, 2*runtime.GOMAXPROCS(0)))
	}
	gate := make(chan struct{}, 1)
	db := &DB{sql: bun.NewDB(sqldb, sqlitedialect.New()), eng: engine.SQLite(schemaNames), gate: gate, entries: writegate.NewGroup(gate)}
	if !memory {
		db.watch = readcache.NewWatch(conn)
	}
	return db, nil
}

func openPostgres(dsn string, cfg openConfig) (*DB, error) {
	pgcfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx redacts the password in its parse errors.
		return nil, fmt.Errorf("bunstore: invalid PostgreSQL URL: %w", err)
	}
	// Bun writes the arguments into the query text, so every query text is
	// new: the default statement cache would prepare (one more round trip)
	// and evict on every query. Exec mode sends each in one round trip.
	pgcfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	if pgcfg.ConnectTimeout <= 0 {
		pgcfg.ConnectTimeout = positive(cfg.connectTimeout, DefaultTimeout)
	}
	sqldb := stdlib.OpenDB(*pgcfg)
	setPool(sqldb, cfg.maxOpenConns, 4*runtime.GOMAXPROCS(0))
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	sqldb.SetConnMaxLifetime(time.Hour)
	return &DB{sql: bun.NewDB(sqldb, pgdialect.New()), eng: engine.Postgres(schemaNames)}, nil
}

// setPool sizes sqldb's pool to n connections, all kept idle; zero or
// less means def.
func setPool(sqldb *sql.DB, n, def int) {
	n = positive(n, def)
	sqldb.SetMaxOpenConns(n)
	sqldb.SetMaxIdleConns(n)
}

// DefaultTimeout bounds each store call when no WithTimeout is given:
// waiting for a pooled connection, every statement and reading the rows.
const DefaultTimeout = 5 * time.Second

// WithTimeout bounds each call of the handle's stores to d, from asking
// the pool for a connection to the last row read. Past it the call fails
// with an error wrapping domain.ErrDatabaseUnavailable. A database that is
// frozen, unreachable or failing over therefore never holds a request
// longer than d. Zero or less means DefaultTimeout.
func WithTimeout(d time.Duration) Option {
	return func(c *openConfig) { c.bounds.Timeout = d }
}

// WithUngroupedWrites makes the handle's CacheRepositories run each write
// on its own: on SQLite outside the handle's write group (internal/writegate),
// on PostgreSQL outside the batches of creates (create_batch.go). It is
// for a tool that wraps many writes in a transaction of its own, by BEGIN
// and COMMIT on a pool of one connection, as the bench seeder does. The
// writes of a server should stay grouped.
func WithUngroupedWrites() Option {
	return func(c *openConfig) { c.ungrouped = true }
}

// DefaultQueryTimeout bounds each statement of a list when no
// WithQueryTimeout is given.
const DefaultQueryTimeout = 2 * time.Second

// WithQueryTimeout bounds the time the database may spend on each
// statement of a CacheRepository's List (the count, and each page of
// rows) to d. Past it the list fails with an error wrapping
// domain.ErrQueryTooExpensive. Waiting for a connection, and a PostgreSQL
// server that stops answering (the bound is its statement_timeout), stay
// under WithTimeout's bound, which also ends a longer d first. Zero or
// less means DefaultQueryTimeout.
func WithQueryTimeout(d time.Duration) Option {
	return func(c *openConfig) { c.bounds.Query = d }
}

// WithCallerBound bounds the calls each caller (the domain.Caller a
// store's For bound them to) runs at once on the handle's pool to
// perCaller (zero or less: half the pool, at least one), so that one
// caller never takes the whole pool (internal/callers). budget,
// when not nil, is charged the time each call holds a connection.
// Without it no caller is bounded.
func WithCallerBound(perCaller int, budget *Budget) Option {
	return func(c *openConfig) { c.callerBound, c.perCaller, c.budget = true, perCaller, budget }
}

// probeTable is a name reserved for the readiness check: files made by
// earlier versions hold an empty table of that name, so no assignment may
// use it (migrate.go).
const probeTable = "cachegate_probe"

// Check reports whether db serves reads and writes now, for readiness
// probes. It fails with an error wrapping domain.ErrDatabaseUnavailable
// when the database does not answer within ctx's deadline (or
// DefaultTimeout), cannot be reached, or is read-only (a PostgreSQL
// standby, an SQLite file on a read-only file system); with one wrapping
// domain.ErrStorageFull when an SQLite file's file system has less room
// than a write may need. On SQLite it writes nothing (internal/engine).
func Check(ctx context.Context, db *DB) (err error) {
	ctx, call := bound.Bounds{Timeout: DefaultTimeout}.Enter(ctx)
	defer call.Done(&err)
	defer func() {
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			err = &dberr.Outage{Kind: domain.ErrDatabaseUnavailable, Cause: err}
		}
	}()
	return db.eng.Check(ctx, db.sql)
}

// Budget is each caller's budget of database time (internal/callers),
// which WithCallerBound charges and ginhttp checks through
// ports.CallerBudget.
type Budget = callers.Budget

// NewBudget returns the budget of rate database time per second per
// caller, with a burst of burst; a rate or burst of zero or less is no
// budget (nil, which admits every caller). clock is the time it refills
// by (nil: the system clock).
func NewBudget(rate, burst time.Duration, clock ports.Clock) *Budget {
	return callers.NewBudget(rate, burst, clock)
}

// fillBounds gives the unset time bounds of b their defaults.
func fillBounds(b bound.Bounds) bound.Bounds {
	b.Timeout = positive(b.Timeout, DefaultTimeout)
	b.Query = positive(b.Query, DefaultQueryTimeout)
	return b
}

// positive returns v, or def when v is zero or less.
func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// schemaNames are the tables the engines' triggers and statements write.
var schemaNames = engine.Names{Changes: changesTable, ChangeColumns: changeColumns,
	ChangesSequence: pgChangesSequence, Usage: usageTable}

// authInTx runs fn in a write transaction of the handle, at its write
// gate, and commits when fn returns nil. fn's error comes back as is;
// failing to begin or commit is wrapped naming op. On SQLite the
// transaction is IMMEDIATE (see Open), so it holds the write lock from the
// start and never meets a stale snapshot.
func authInTx(ctx context.Context, call *bound.Call, db *DB, op string, fn func(ctx context.Context, tx bun.Tx) error) error {
	leave, err := writegate.Enter(ctx, db.gate, call.Hold())
	if err != nil {
		return dberr.Wrap(op, err)
	}
	defer leave()
	return inTx(ctx, db.sql, op, fn)
}

// gated runs fn, which writes through the handle outside a transaction,
// at the handle's write gate (none on PostgreSQL): every writer of an
// SQLite database queues there, single statements too (internal/writegate).
func gated(ctx context.Context, call *bound.Call, db *DB, fn func() error) error {
	leave, err := writegate.Enter(ctx, db.gate, call.Hold())
	if err != nil {
		return err
	}
	defer leave()
	return fn()
}

// exec is one statement through db.sql, gated: it returns how many rows
// the statement changed, or its failure wrapped naming op.
func (db *DB) exec(ctx context.Context, call *bound.Call, op, query string, args ...any) (int, error) {
	var n int64
	err := gated(ctx, call, db, func() error {
		res, err := db.sql.ExecContext(ctx, query, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, dberr.Wrap(op, err)
	}
	return int(n), nil
}

// inTx is authInTx for a caller that already holds the write gate (or
// needs none).
func inTx(ctx context.Context, db *bun.DB, op string, fn func(ctx context.Context, tx bun.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return dberr.Wrap(op, err)
	}
	if err := fn(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return dberr.Wrap(op, err)
	}
	return nil
}
