// Package storefx is the fx module of storage: it opens the database
// (SQLite or PostgreSQL, through adapters/bunstore), migrates its schema and
// provides every storage port; Memory provides the in-memory adapters
// instead, for tests and embedders who need no persistence.
//
// Provides: *bunstore.DB and ports.CallerBudget (SQL only),
// cachefx.RepoFactory, ports.ChangeLog, ports.UserRepository,
// ports.RefreshStore, ports.KeyStore, ports.LoginThrottle, a Pinger for
// readiness, and purgers in the value group "purgers" for the sweeper.
package storefx

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/extra/bunotel"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/bootstrap/cachefx"
	"github.com/cachegate/cachegate/bootstrap/tracefx"
	"github.com/cachegate/cachegate/ports"
)

// Options configure the SQL store.
type Options struct {
	// Database is "sqlite:PATH", "sqlite::memory:" or "postgres://…".
	Database string
	// Timeout bounds each call to the database and each connection
	// attempt; zero means bunstore.DefaultTimeout.
	Timeout time.Duration
	// QueryTimeout bounds the database's time on each statement of a list
	// (bunstore.WithQueryTimeout); zero means bunstore.DefaultQueryTimeout.
	QueryTimeout time.Duration
	// UserStatements bounds the calls one caller runs at once on the
	// database (bunstore.WithCallerBound); zero means half the pool.
	UserStatements int
	// UserTime and UserBurst are each caller's budget of database time
	// per second and at once (bunstore.NewBudget); zero UserTime: none.
	UserTime, UserBurst time.Duration
	// Tables are the cache tables to migrate.
	Tables []string
	// Migrate applies pending migrations when the database is opened.
	Migrate bool
	// AuditRetention is how long audit events are kept (default
	// DefaultAuditRetention).
	AuditRetention time.Duration
}

// DefaultAuditRetention is the default of Options.AuditRetention
// (README, "Configuration").
const DefaultAuditRetention = 90 * 24 * time.Hour

// Pinger answers whether storage is reachable.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Open opens and, when asked, migrates the database: the plain constructor
// behind the module. opts add to o's timeouts (the caller bound, tracing).
func Open(ctx context.Context, o Options, opts ...bunstore.Option) (*bunstore.DB, error) {
	opts = append([]bunstore.Option{bunstore.WithConnectTimeout(o.Timeout), bunstore.WithTimeout(o.Timeout),
		bunstore.WithQueryTimeout(o.QueryTimeout)}, opts...)
	db, err := bunstore.Open(ctx, o.Database, opts...)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if o.Migrate {
		if err := bunstore.Migrate(ctx, db, o.Tables); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("database: migrate: %w", err)
		}
	}
	return db, nil
}

type tracing struct {
	fx.In
	Tracing tracefx.Tracing `optional:"true"`
}

// parentedHook traces only the statements run inside a span
// (ARCHITECTURE.md, "Tracing": SQL spans).
type parentedHook struct{ h *bunotel.QueryHook }

func (p parentedHook) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return p.h.BeforeQuery(ctx, e)
}

func (p parentedHook) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		p.h.AfterQuery(ctx, e)
	}
}

// openTimeout bounds opening and migrating at start-up.
const openTimeout = 60 * time.Second

// SQL provides the storage ports on the database o names.
func SQL(o Options) fx.Option {
	return fx.Module("store",
		fx.Supply(fx.Private, o),
		// The budget the caller limit charges and httpfx checks.
		fx.Provide(fx.Private, func(o Options, clock ports.Clock) *bunstore.Budget {
			return bunstore.NewBudget(o.UserTime, o.UserBurst, clock)
		}),
		fx.Provide(func(b *bunstore.Budget) ports.CallerBudget { return b }),
		fx.Provide(
			func(lc fx.Lifecycle, o Options, t tracing, b *bunstore.Budget) (*bunstore.DB, error) {
				ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
				defer cancel()
				// One bound on each caller's calls for every store, on the
				// pool (README, "Fair share of the database").
				opts := []bunstore.Option{bunstore.WithCallerBound(o.UserStatements, b)}
				if t.Tracing.Provider != nil {
					opts = append(opts, bunstore.WithQueryHook(parentedHook{bunotel.NewQueryHook(bunotel.WithTracerProvider(t.Tracing.Provider))}))
				}
				db, err := Open(ctx, o, opts...)
				if err != nil {
					return nil, err
				}
				lc.Append(fx.StopHook(db.Close))
				return db, nil
			},
			fx.Annotate(bunstore.NewChangeLog, fx.As(new(ports.ChangeLog))),
			func(db *bunstore.DB) cachefx.RepoFactory {
				return func(table string) (ports.CacheRepository, error) {
					if err := bunstore.ValidateTableName(table); err != nil {
						return nil, err
					}
					return bunstore.NewCacheRepository(db, table), nil
				}
			},
			fx.Annotate(bunstore.NewUserRepository, fx.As(new(ports.UserRepository))),
			fx.Annotate(bunstore.NewRefreshStore, fx.As(new(ports.RefreshStore))),
			fx.Annotate(bunstore.NewKeyStore, fx.As(new(ports.KeyStore))),
			fx.Annotate(bunstore.NewLoginThrottle, fx.As(new(ports.LoginThrottle))),
			func(lc fx.Lifecycle, db *bunstore.DB) *bunstore.AuditLog {
				l := bunstore.NewAuditLog(db)
				// Write the login attempts it holds before the database
				// closes (its stop hook, appended earlier, runs later).
				lc.Append(fx.StopHook(l.Flush))
				return l
			},
			func(l *bunstore.AuditLog) ports.AuditLog { return l },
			// The user, refresh and key stores write their changes' events
			// into this database's auth_events, in the change's transaction.
			func(l *bunstore.AuditLog) ports.ChangeAuditLog { return ports.ChangeAuditLog{Log: l} },
			func(db *bunstore.DB) Pinger { return sqlPinger{db} },
			purgers,
		),
		// Open (and migrate) the database at start-up even when nothing
		// else asks for it, as `cachegate migrate` does not.
		fx.Invoke(func(*bunstore.DB) {}),
	)
}

// Memory provides the storage ports in memory.
func Memory() fx.Option {
	return fx.Module("store",
		fx.Supply(fx.Private, Options{}),
		fx.Provide(
			func() *memstore.ChangeLog { return memstore.NewChangeLog() },
			func(l *memstore.ChangeLog) ports.ChangeLog { return l },
			func(l *memstore.ChangeLog) cachefx.RepoFactory {
				repos := map[string]*memstore.CacheRepository{}
				return func(table string) (ports.CacheRepository, error) {
					if repos[table] == nil {
						repos[table] = l.Repository(table)
					}
					return repos[table], nil
				}
			},
			memstore.NewAuditLog,
			memstore.NewRefreshStore,
			func(s *memstore.RefreshStore) ports.RefreshStore { return s },
			// Disabling a user or setting a password revokes the user's
			// families in this refresh store, with the change.
			fx.Annotate(memstore.NewUserRepository, fx.As(new(ports.UserRepository))),
			fx.Annotate(memstore.NewKeyStore, fx.As(new(ports.KeyStore))),
			fx.Annotate(memstore.NewLoginThrottle, fx.As(new(ports.LoginThrottle))),
			func(l *memstore.AuditLog) ports.AuditLog { return l },
			func(l *memstore.AuditLog) ports.ChangeAuditLog { return ports.ChangeAuditLog{Log: l} },
			func() Pinger { return alwaysReady{} },
			purgers,
		),
	)
}

type sqlPinger struct{ db *bunstore.DB }

// Ping reports whether the database serves reads and writes, as a
// *domain.Error when it knows why not (bunstore.Check).
func (p sqlPinger) Ping(ctx context.Context) error { return bunstore.Check(ctx, p.db) }

type alwaysReady struct{}

func (alwaysReady) Ping(context.Context) error { return nil }

// Purgers are the sweeper's jobs besides the cache tables.
type Purgers struct {
	fx.Out
	Refresh  background.Purger `group:"purgers"`
	Failures background.Purger `group:"purgers"`
	Audit    background.Purger `group:"purgers"`
}

// failureRetention keeps failed logins long enough for any throttle
// window one would configure.
const failureRetention = 24 * time.Hour

func purgers(r ports.RefreshStore, t ports.LoginThrottle, a ports.AuditLog, o Options) Purgers {
	retention := o.AuditRetention
	if retention <= 0 {
		retention = DefaultAuditRetention
	}
	return Purgers{
		Audit:   background.AuditPurger(a, retention),
		Refresh: background.Purger{Name: "refresh_families", Purge: r.PurgeRefresh},
		Failures: background.Purger{Name: "login_failures", Purge: func(ctx context.Context, now time.Time, limit int) (int, error) {
			return t.PurgeFailures(ctx, now.Add(-failureRetention), limit)
		}},
	}
}
