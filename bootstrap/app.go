package bootstrap

import (
	"cmp"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/bootstrap/authfx"
	"github.com/cachegate/cachegate/bootstrap/cachefx"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/bootstrap/feedfx"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/bootstrap/internal/fxrun"
	"github.com/cachegate/cachegate/bootstrap/internal/logbuf"
	"github.com/cachegate/cachegate/bootstrap/metricsfx"
	"github.com/cachegate/cachegate/bootstrap/storefx"
	"github.com/cachegate/cachegate/bootstrap/tracefx"
	"github.com/cachegate/cachegate/ports"
)

// App is the whole service built from cfg: storage, cache, auth, the
// sweeper and the HTTP server. extra options come last, so an embedder can
// fx.Decorate or fx.Replace any port.
func App(cfg config.Config, logOut io.Writer, extra ...fx.Option) fx.Option {
	return fx.Options(
		Core(cfg, logOut),
		Sweeper(cfg.Sweep),
		metricsfx.Module(cfg.MetricsAddr, cfg.MetricsToken.Reveal()),
		feedfx.Module(feedfx.Options{Retention: cfg.Events.Retention}),
		httpfx.Module(HTTPOptions(cfg)),
		SetupLink(application.FirstAdminOptions{FromAnywhere: cfg.SetupFromAnywhere}),
		fx.Options(extra...),
	)
}

// Core is everything but the HTTP server and the sweeper: what the
// administrative commands need.
func Core(cfg config.Config, logOut io.Writer) fx.Option {
	cache := CacheOptions(cfg)
	return fx.Options(
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.Supply(NewLogger(cfg.Log, logOut)),
		System(),
		tracefx.Module(),
		storefx.SQL(storefx.Options{Database: cfg.Database, Timeout: cfg.DatabaseTimeout,
			QueryTimeout: cfg.QueryTimeout, UserStatements: cfg.DatabaseUserStatements,
			UserTime: cfg.DatabaseUserTime, UserBurst: cfg.DatabaseUserBurst,
			Tables: cache.Tables(), Migrate: true, AuditRetention: cfg.AuditRetention}),
		cachefx.ForRoot(cache),
		authfx.ForRoot(AuthOptions(cfg)),
	)
}

// System provides the real clock and UUIDv7 ids.
func System() fx.Option {
	return fx.Provide(
		func() ports.Clock { return system.Clock{} },
		func() ports.IDGenerator { return system.UUIDv7{} },
	)
}

// NewLogger returns the slog logger the configuration asks for. Lines
// logged with a request's context carry its request id (ports.LogRequestIDs).
// A buffered out (logbuf) is flushed at once by a warning or an error.
func NewLogger(c config.Log, out io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.Level}
	var h slog.Handler = slog.NewTextHandler(out, opts)
	if c.Format == config.LogJSON {
		h = slog.NewJSONHandler(out, opts)
	}
	if b, ok := out.(*logbuf.Writer); ok {
		h = logbuf.FlushAt(h, b, slog.LevelWarn)
	}
	return slog.New(ports.LogRequestIDs(h))
}

// CacheOptions converts the cache part of the configuration.
func CacheOptions(cfg config.Config) cachefx.Options {
	var def time.Duration
	if cfg.Cache.Settings.ExpiresIn != nil {
		def = *cfg.Cache.Settings.ExpiresIn
	}
	o := cachefx.Options{MaxDataBytes: int(cfg.Limits.DataBytes),
		ListDefault: cfg.Limits.ListDefault, ListMax: cfg.Limits.ListMax}
	for _, n := range slices.Sorted(maps.Keys(cfg.Cache.Settings.Assignments)) {
		a := cfg.Cache.Settings.Assignments[n]
		o.Assignments = append(o.Assignments, cachefx.Assignment{Name: n, EntityKey: a.EntityKey,
			Table: cfg.Cache.Entities[a.EntityKey].Table, Policy: a.Policy, DefaultExpiresIn: def,
			Quota: cfg.Cache.Settings.Quota(n)})
	}
	return o
}

// AuthOptions converts the auth part of the configuration.
func AuthOptions(cfg config.Config) authfx.Options {
	a := cfg.Auth
	return authfx.Options{
		AccessTTL: cfg.AccessTokenTTL, RefreshTTL: cfg.RefreshTokenTTL,
		Issuer: a.Issuer, Audience: a.Audience, ClientID: a.ClientID,
		PasswordAlgorithm: string(a.PasswordAlgorithm), BcryptCost: a.BcryptCost,
		Throttle: application.ThrottleLimits{PerUsername: a.Throttle.UsernameLimit,
			PerAddress: a.Throttle.AddressLimit, Window: a.Throttle.Window},
		DisableThrottle: a.Throttle.UsernameLimit == 0 && a.Throttle.AddressLimit == 0,
		// authfx reads zero as its default; the configuration's 0 is "at once".
		KeyPublishAhead:   cmp.Or(a.KeyPublishAhead, -1),
		RefreshReuseGrace: a.RefreshReuseGrace, SessionMax: a.SessionMax, MaxSessionsPerUser: a.MaxSessionsPerUser,
		AuditFoldWindow:     cfg.AuditFoldWindow,
		KeyEncryptionSecret: a.KeyEncryptionSecret.Bytes(), HS256Secret: a.HS256Secret.Bytes(),
	}
}

// HTTPOptions converts the HTTP part of the configuration.
func HTTPOptions(cfg config.Config) httpfx.Options {
	var cors *ginhttp.CORSOptions
	if cfg.CORS.Enabled() {
		cors = &ginhttp.CORSOptions{Origins: cfg.CORS.Origins, Credentials: cfg.CORS.Credentials}
	}
	return httpfx.Options{Addr: cfg.Addr, BodyLimit: cfg.Limits.BodyBytes, CORS: cors,
		MaxHeaderBytes: int(cfg.Limits.HeaderBytes), TrustedProxies: cfg.TrustedProxies,
		EnableGuards: cfg.Auth.EnableGuards, ShutdownTimeout: cfg.ShutdownTimeout,
		UsernameField: cfg.Auth.UsernameField, PasswordField: cfg.Auth.PasswordField,
		RefreshFrom: ginhttp.TokenLocation(cfg.Auth.RefreshFrom.In), RefreshName: cfg.Auth.RefreshFrom.Name,
		Heartbeat: cfg.Events.Heartbeat, Retry: cfg.Events.Retry,
		Limits: callerLimits(cfg.Caps), ErrorFormat: ginhttp.ErrorFormat(cfg.ErrorFormat), Console: cfg.Console}
}

// callerLimits converts the caps; the configuration's 0 (no cap) is
// ginhttp's negative value, as ginhttp's zero means its default.
func callerLimits(c config.Caps) limits.Options {
	return limits.Options{ListsPerUser: cmp.Or(c.ListsPerUser, -1), StreamsPerUser: cmp.Or(c.StreamsPerUser, -1),
		ConnsPerAddress: cmp.Or(c.ConnsPerAddress, -1)}
}

type sweeperDeps struct {
	fx.In
	Cache   *application.CacheOperations
	Purgers []background.Purger `group:"purgers"`
	Clock   ports.Clock
	Log     *slog.Logger
	Metrics ports.Metrics `optional:"true"`
}

// Sweeper runs the background sweeper for the app's lifetime.
func Sweeper(c config.Sweep) fx.Option {
	return fx.Module("sweeper", fx.Invoke(func(lc fx.Lifecycle, d sweeperDeps) {
		s := &background.Sweeper{
			Purgers:  append(background.CachePurgers(d.Cache.Assignments), d.Purgers...),
			Clock:    d.Clock,
			Batch:    c.Batch,
			Interval: c.Interval,
			Log:      d.Log,
		}
		if d.Metrics != nil {
			s.OnSwept = d.Metrics.CacheRowsSwept
		}
		fxrun.Go(lc, s.Run)
	}))
}
