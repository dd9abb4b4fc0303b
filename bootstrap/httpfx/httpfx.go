// Package httpfx is the fx module of the HTTP server: it builds the
// ginhttp adapter from the use cases in the graph and serves it for the
// app's lifetime, shutting down gracefully.
//
// Requires: *application.CacheOperations (optional), the auth use cases
// (optional: without *application.Authenticate no route is guarded),
// storefx.Pinger (optional), ports.CallerBudget (optional), *slog.Logger.
// Provides: *ginhttp.Server and the bound listen address (Addr).
package httpfx

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap/authfx"
	"github.com/cachegate/cachegate/bootstrap/storefx"
	"github.com/cachegate/cachegate/bootstrap/tracefx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Options configure the server.
type Options struct {
	// Addr is the listen address; port 0 picks a free one (see Addr).
	Addr         string
	BodyLimit    int64
	EnableGuards bool
	// MaxHeaderBytes bounds a request's header (431 beyond); zero means
	// ginhttp.DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// TrustedProxies are the proxies whose X-Forwarded-For is believed.
	TrustedProxies []string
	// CORS lets browser apps on other origins call the API; nil is none.
	CORS *ginhttp.CORSOptions
	// ShutdownTimeout bounds how long in-flight requests may finish.
	ShutdownTimeout time.Duration
	// Routes are an integrator's extra routes.
	Routes []ginhttp.Route
	// UsernameField, PasswordField, RefreshFrom and RefreshName shape the
	// authentication routes (see ginhttp.AuthOptions).
	UsernameField string
	PasswordField string
	RefreshFrom   ginhttp.TokenLocation
	RefreshName   string
	// Heartbeat is the event streams' keep-alive interval (default 15s).
	Heartbeat time.Duration
	// Retry is the event streams' announced reconnection delay (default 2s).
	Retry time.Duration
	// Limits cap what one caller holds open at once; the zero value is
	// ginhttp's defaults.
	Limits limits.Options
	// ErrorFormat renders 400 validation errors ("" is cachegate's).
	ErrorFormat ginhttp.ErrorFormat
	// Console serves the web console at /console/.
	Console bool
}

// Addr is the address the server listens on once the app started.
type Addr struct{ addr chan string }

// Get returns the bound address; it blocks until the server listens.
func (a Addr) Get() string {
	v := <-a.addr
	a.addr <- v
	return v
}

// Deps are what the server needs from the graph.
type Deps struct {
	fx.In
	Options      Options
	Log          *slog.Logger
	Cache        *application.CacheOperations `optional:"true"`
	Authenticate *application.Authenticate    `optional:"true"`
	Ready        storefx.Pinger               `optional:"true"`
	Login        *application.Login           `optional:"true"`
	Refresh      *application.Refresh         `optional:"true"`
	Logout       *application.Logout          `optional:"true"`
	Keys         authfx.KeySet                `optional:"true"`
	// The admin API and self-service (docs/admin.md).
	AdminCheck  *application.AdminCheck  `optional:"true"`
	Users       *application.Users       `optional:"true"`
	AuditTrail  *application.AuditTrail  `optional:"true"`
	SigningKeys *application.Keys        `optional:"true"`
	Self        *application.SelfService `optional:"true"`
	Observer    ginhttp.RequestObserver  `optional:"true"`
	// Routes are extra routes other modules contribute.
	Routes []ginhttp.Route `group:"routes"`
	// Metrics mounts GET /metrics (metricsfx without an address of its own).
	Metrics *ginhttp.MetricsOptions `optional:"true"`
	// Tracing, when its Provider is set, gives each request a span.
	Tracing tracefx.Tracing `optional:"true"`
	// Budget is each caller's budget of database time (storefx.SQL).
	Budget ports.CallerBudget `optional:"true"`
	// FirstAdmin mounts POST /auth/setup, the one-time set-up link of
	// the first admin (bootstrap.SetupLink).
	FirstAdmin *application.FirstAdmin `optional:"true"`
}

// New builds the ginhttp server: the plain constructor behind Module.
func New(d Deps) (*ginhttp.Server, error) {
	// Gin keeps its mode in a process-wide variable (atomic, so setting it
	// again is harmless); release mode silences its debug route printing.
	gin.SetMode(gin.ReleaseMode)
	var auth ginhttp.Authenticator
	// Open event streams are re-authorised with the Authenticate use case
	// (in memory, woken by authfx's revocation poll and key reload);
	// without it they end at their token's expiry only.
	stream := ginhttp.StreamOptions{Heartbeat: d.Options.Heartbeat, Retry: d.Options.Retry}
	if d.Authenticate != nil {
		auth = authenticator{d.Authenticate}
		stream.Recheck, stream.Changed = d.Authenticate.Recheck, d.Authenticate.Changed
	}
	// The caps come with the storage's budget of database time, unless
	// the options name one.
	caps := d.Options.Limits
	if caps.Budget == nil {
		caps.Budget = d.Budget
	}
	var authRoutes *ginhttp.AuthOptions
	if d.Login != nil || d.Refresh != nil {
		authRoutes = &ginhttp.AuthOptions{Login: d.Login, Refresh: d.Refresh, Logout: d.Logout, Keys: d.Keys,
			UsernameField: d.Options.UsernameField, PasswordField: d.Options.PasswordField,
			RefreshFrom: d.Options.RefreshFrom, RefreshName: d.Options.RefreshName}
		// A cookie refresh is accepted from the CORS origins besides the
		// API's own.
		if d.Options.CORS != nil {
			authRoutes.Origins = d.Options.CORS.Origins
		}
	}
	var adminOpts *admin.Options
	if d.AdminCheck != nil && auth != nil {
		adminOpts = &admin.Options{Check: d.AdminCheck, Users: d.Users, Keys: d.SigningKeys, Self: d.Self}
		if d.AuditTrail.Stored() {
			adminOpts.Audit = d.AuditTrail // without a stored trail the audit routes are left out
		}
		if d.Cache != nil && d.Users != nil {
			entries, err := application.NewAdminEntries(d.Cache, d.Users)
			if err != nil {
				return nil, err
			}
			adminOpts.Entries = entries
		}
	}
	var setup *admin.SetupOptions
	if d.FirstAdmin != nil {
		setup = &admin.SetupOptions{Link: d.FirstAdmin}
	}
	return ginhttp.New(ginhttp.Options{
		Setup:          setup,
		Admin:          adminOpts,
		Auth:           authRoutes,
		Cache:          d.Cache,
		Logger:         d.Log,
		BodyLimit:      d.Options.BodyLimit,
		MaxHeaderBytes: d.Options.MaxHeaderBytes,
		TrustedProxies: d.Options.TrustedProxies,
		CORS:           d.Options.CORS,
		Authenticator:  auth,
		EnableGuards:   d.Options.EnableGuards && auth != nil,
		Ready:          d.Ready,
		Routes:         append(append([]ginhttp.Route(nil), d.Options.Routes...), d.Routes...),
		Observer:       d.Observer,
		TracerProvider: d.Tracing.Provider,
		Stream:         stream,
		Limits:         caps,
		ErrorFormat:    d.Options.ErrorFormat,
		Metrics:        d.Metrics,
		Console:        d.Options.Console,
	})
}

type authenticator struct{ uc *application.Authenticate }

func (a authenticator) Authenticate(ctx context.Context, token string) (domain.Principal, error) {
	return a.uc.Execute(ctx, token)
}

// Module serves HTTP with options given directly.
func Module(o Options) fx.Option {
	return fx.Module("http",
		fx.Supply(fx.Private, o),
		fx.Provide(New, newAddr),
		fx.Invoke(serve),
	)
}

func newAddr() Addr { return Addr{addr: make(chan string, 1)} }

func serve(lc fx.Lifecycle, o Options, s *ginhttp.Server, addr Addr, log *slog.Logger) {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    s.MaxHeaderBytes(),
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Event streams never end on their own: end them when shutdown
	// begins, and wait (Drain) until each has sent its end event, since
	// Shutdown does not wait for the connections they took over.
	srv.RegisterOnShutdown(s.CloseStreams)
	timeout := o.ShutdownTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	lc.Append(ServerHook(srv, Listen{Addr: o.Addr, Setting: "addr", ShutdownTimeout: timeout, Log: log,
		Bound: func(a string) { addr.addr <- a }, Drain: s.WaitStreams, Wrap: s.Listener}))
}
