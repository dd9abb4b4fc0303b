package ginhttp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/ginhttp/console"
	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/ports"
)

// DefaultBodyLimit is the largest request body accepted when
// Options.BodyLimit is zero.
const DefaultBodyLimit = 1 << 20

// Pinger reports whether a dependency the service needs (the database)
// answers. Ping must honour ctx's deadline.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Route is an integrator's extra route: a plain http.Handler mounted on
// the same engine, behind the same middleware and guard. Inside it,
// CurrentUser(r) returns the authenticated caller.
type Route struct {
	// Method is an HTTP method such as http.MethodGet.
	Method string
	// Path is a Gin path pattern: "/reports" or "/reports/:id" (read
	// parameters from r.URL.Path; they are not passed on).
	Path    string
	Handler http.Handler
	// Public marks the route as reachable without a token when guards are
	// enabled (the SPEC's public marker). To mark a whole group, set it on
	// every route of the group.
	Public bool
}

// Options configure the HTTP adapter.
type Options struct {
	// Cache serves /cache/<assignment> for every assignment of
	// Cache.Assignments; nil serves no cache routes.
	Cache *application.CacheOperations
	// Logger receives the access log and internal errors; nil discards.
	Logger *slog.Logger
	// BodyLimit is the largest request body in bytes; zero means
	// DefaultBodyLimit. Larger bodies are answered 413.
	BodyLimit int64
	// Authenticator verifies bearer tokens; nil means no authentication at
	// all: every caller is domain.Anonymous() and Authorization headers
	// are not read.
	Authenticator Authenticator
	// EnableGuards makes every route not marked public answer 401 without
	// a valid token. It requires an Authenticator.
	EnableGuards bool
	// Ready is checked by GET /readyz; nil means always ready. A
	// *domain.Error it returns (database unavailable, storage full) gives
	// its code to the 503.
	Ready Pinger
	// TrustedProxies lists the proxy addresses or CIDRs whose
	// X-Forwarded-For is believed: when the TCP peer is one of them, the
	// client address (logged, and throttled by login) is the rightmost
	// hop of X-Forwarded-For that is not. None by default, so a client
	// cannot choose its address.
	TrustedProxies []string
	// MaxHeaderBytes bounds a request's header (431 beyond); zero means
	// DefaultMaxHeaderBytes. It is for the http.Server serving Handler
	// (see MaxHeaderBytes).
	MaxHeaderBytes int
	// Routes are mounted at construction, as if passed to Server.Handle.
	Routes []Route
	// Auth mounts the authentication routes; nil leaves them out.
	Auth *AuthOptions
	// CORS answers cross-origin requests of browser apps; nil sends no
	// CORS headers.
	CORS *CORSOptions
	// Observer learns every request's method, route template ("" when no
	// route matched), status and duration, for metrics; nil is none.
	Observer RequestObserver
	// TracerProvider, when set, gives each request a server span (W3C
	// trace context) and its log line a trace_id (ARCHITECTURE.md,
	// "Tracing"); nil adds no middleware.
	TracerProvider trace.TracerProvider
	// Stream configures the change feed's event streams.
	Stream StreamOptions
	// Limits cap what one caller holds at once (lists, streams,
	// connections); the zero value is the defaults (see limits.Options).
	Limits limits.Options
	// ErrorFormat renders 400 validation errors; "" is
	// ErrorFormatCachegate.
	ErrorFormat ErrorFormat
	// Metrics mounts GET /metrics for the metrics token or an
	// administrator; nil mounts none.
	Metrics *MetricsOptions
	// Console serves the embedded web console at ConsolePath (README, "Web
	// console"); its routes are not in the OpenAPI document.
	Console bool
	// Admin mounts the admin API and the self-service routes
	// (docs/admin.md; the admin room); nil leaves them out.
	Admin *admin.Options
	// Setup mounts POST /auth/setup, where the one-time set-up link
	// creates the first admin (the admin room); nil leaves it out.
	Setup *admin.SetupOptions
}

// RequestObserver records finished requests; it must be cheap and safe
// for concurrent use.
type RequestObserver interface {
	ObserveRequest(method, route string, status int, d time.Duration)
}

// Server is the HTTP adapter: a Gin engine with cachegate's middleware and
// routes. Register extra routes before serving; afterwards it is safe for
// concurrent use.
type Server struct {
	engine    *gin.Engine
	log       *slog.Logger
	auth      Authenticator
	guards    bool
	bodyLimit int64
	ready     Pinger
	observer  RequestObserver
	proxies   web.Proxies
	maxHeader int
	// outages limits the log lines of repeated database failures.
	outages *web.LogLimiter
	stream  StreamOptions
	// streams ends when the server shuts down (CloseStreams), ending every
	// open event stream.
	streams      context.Context
	closeStreams context.CancelFunc
	// openStreams counts the streams running on connections taken over
	// from net/http (WaitStreams).
	streamsMu   sync.Mutex
	openStreams int
	streamsIdle chan struct{}
	// caps are the per-caller limits (the limits room).
	caps *limits.Caps
	// errs answers failures (web.Errors); host is what the rooms share.
	errs *web.Errors
	host *web.Host
	// cache is the cache API's room; nil without Options.Cache.
	cache *cacheRoutes

	// failures limits the access lines of requests answered 5xx
	// (logAccess); now is its clock, replaced by tests.
	failures *web.LogLimiter
	now      func() time.Time
}

// ConsolePath is where the console is served (Options.Console), and
// ConsoleCSP the Content-Security-Policy of its every answer.
// ConsoleSetupPath is the first admin's set-up page (console.SetupPath).
const (
	ConsolePath      = console.Path
	ConsoleCSP       = console.CSP
	ConsoleSetupPath = console.SetupPath
)

// DefaultMaxHeaderBytes is the header limit when Options.MaxHeaderBytes is
// zero (docs/api.md, "Conventions").
const DefaultMaxHeaderBytes = 64 << 10

// MaxHeaderBytes is the value for http.Server.MaxHeaderBytes. net/http
// answers 431 Request Header Fields Too Large to a longer header (it reads
// up to 4 KiB more than this before deciding).
func (s *Server) MaxHeaderBytes() int { return s.maxHeader }

// Listener returns ln holding each client address to
// limits.Options.ConnsPerAddress open connections (limits.Caps.Listener).
// Serve the Handler on it (bootstrap/httpfx does).
func (s *Server) Listener(ln net.Listener) net.Listener { return s.caps.Listener(ln) }

// ClientAddr returns the client address of r as the server sees it (see
// Options.TrustedProxies).
func (s *Server) ClientAddr(r *http.Request) string { return s.proxies.ClientAddr(r) }

// New builds the server. It fails when the options contradict each other
// (guards without an Authenticator, a negative body limit, an untrusted
// proxy list that does not parse, a route that clashes with another).
// Gin's mode is process-wide and left to the caller: bootstrap sets release
// mode, which silences Gin's debug route printing.
func New(opts Options) (*Server, error) {
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	if err := s.useMiddleware(opts); err != nil {
		return nil, err
	}
	for _, mount := range []func() error{
		s.mountHealth,
		func() error { return s.mountCache(opts.Cache) },
		func() error { return s.mountAuth(opts.Auth, opts.CORS) },
		func() error { return s.mountMetrics(opts.Metrics, opts.Admin) },
		func() error { return s.mountAdmin(opts.Admin, opts.Setup) },
		func() error { return s.HandleGroup(Group{Routes: opts.Routes}) },
		func() error { return s.mountConsole(opts.Console, opts.Cache) },
	} {
		if err := mount(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// newServer checks opts and builds the server with its defaults, its
// error writer, what the rooms share and the per-caller caps.
func newServer(opts Options) (*Server, error) {
	switch {
	case opts.EnableGuards && opts.Authenticator == nil:
		return nil, errors.New("ginhttp: EnableGuards needs an Authenticator")
	case opts.BodyLimit < 0:
		return nil, errors.New("ginhttp: BodyLimit must not be negative")
	case opts.MaxHeaderBytes < 0:
		return nil, errors.New("ginhttp: MaxHeaderBytes must not be negative")
	}
	format, err := web.ParseErrorFormat(opts.ErrorFormat)
	if err != nil {
		return nil, err
	}
	trusted, err := web.ParseProxies(opts.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("ginhttp: trusted proxies: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		engine:    gin.New(),
		log:       slog.New(ports.LogRequestIDs(log.Handler())),
		auth:      opts.Authenticator,
		guards:    opts.EnableGuards,
		bodyLimit: cmp.Or(opts.BodyLimit, DefaultBodyLimit),
		ready:     opts.Ready,
		observer:  opts.Observer,
		proxies:   trusted,
		maxHeader: cmp.Or(opts.MaxHeaderBytes, DefaultMaxHeaderBytes),
		outages:   web.NewLogLimiter(web.OutageLogInterval),
		failures:  web.NewLogLimiter(web.OutageLogInterval),
		now:       time.Now,
		stream:    opts.Stream,
	}
	s.streams, s.closeStreams = context.WithCancel(context.Background())
	s.stream.Heartbeat = positiveOr(s.stream.Heartbeat, DefaultHeartbeat)
	s.stream.Retry = positiveOr(s.stream.Retry, DefaultRetry)
	s.stream.WriteTimeout = positiveOr(s.stream.WriteTimeout, DefaultStreamWriteTimeout)
	s.errs = web.NewErrors(s.log, format, s.outages)
	s.host = &web.Host{Router: router{s}, Errors: s.errs, BodyLimit: s.bodyLimit, HasAuth: s.auth != nil}
	s.caps = limits.New(opts.Limits, s.host, s.proxies)
	return s, nil
}

// positiveOr is d, or def when d is not positive.
func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// useMiddleware sets up the engine and its middleware, in the order of
// doc.go.
func (s *Server) useMiddleware(opts Options) error {
	e := s.engine
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.HandleMethodNotAllowed = true
	// Gin's own client-IP logic is off: it reads only the first
	// X-Forwarded-For line. web.Proxies.ClientAddr decides instead.
	if err := e.SetTrustedProxies(nil); err != nil {
		return fmt.Errorf("ginhttp: trusted proxies: %w", err)
	}
	e.ForwardedByClientIP = false
	if opts.TracerProvider != nil {
		// First, so the span covers every other middleware and is still in
		// the context when the access log writes its line.
		e.Use(otelgin.Middleware("cachegate", otelgin.WithTracerProvider(opts.TracerProvider),
			otelgin.WithPropagators(propagation.TraceContext{})))
	}
	e.Use(s.requestIDMiddleware, s.recovery, s.accessLog)
	cors, err := corsMiddleware(opts.CORS)
	if err != nil {
		return err
	}
	if cors != nil {
		// Before routing and the guard: a preflight carries no token.
		e.Use(cors)
	}
	e.Use(s.limitBody)
	if f := s.caps.Forwarded(); f != nil {
		e.Use(f)
	}
	e.NoRoute(func(c *gin.Context) { s.errs.Fail(c, web.ErrRouteNotFound) })
	e.NoMethod(func(c *gin.Context) { s.errs.Fail(c, web.ErrMethodNotAllowed) })
	return nil
}

// mountHealth mounts the probes and the OpenAPI document.
func (s *Server) mountHealth() error {
	for _, rt := range []web.Route{{Path: "/healthz", Handler: s.healthz}, {Path: "/readyz", Handler: s.readyz},
		{Path: "/openapi.json", Handler: s.openAPI}} {
		rt.Method, rt.Access = http.MethodGet, web.Public
		if err := s.host.Mount(rt); err != nil {
			return err
		}
	}
	return nil
}

// mountCache mounts the cache API's room; nil mounts nothing.
func (s *Server) mountCache(uc *application.CacheOperations) error {
	if uc == nil {
		return nil
	}
	if uc.Assignments == nil {
		return errors.New("ginhttp: Cache has no Stores")
	}
	r, err := newCacheRoutes(s, uc)
	if err != nil {
		return fmt.Errorf("ginhttp: %w", err)
	}
	s.cache = r
	return r.register()
}

// mountAuth mounts the authentication routes; nil mounts nothing. A
// cookie refresh takes the CORS origins as the allowed sites unless told.
func (s *Server) mountAuth(a *AuthOptions, cors *CORSOptions) error {
	if a == nil {
		return nil
	}
	o, err := a.withDefaults()
	if err != nil {
		return err
	}
	if o.Origins == nil && cors != nil {
		o.Origins = cors.Origins
	}
	return (&authRoutes{s: s, o: o}).register()
}

// mountAdmin mounts the admin room and the set-up route; nil mounts
// nothing.
func (s *Server) mountAdmin(o *admin.Options, setup *admin.SetupOptions) error {
	if o != nil {
		d := admin.Deps{Host: s.host, Caps: s.caps, Shutdown: s.streams, Log: s.log,
			Stream: admin.Stream{Heartbeat: s.stream.Heartbeat, Retry: s.stream.Retry,
				WriteTimeout: s.stream.WriteTimeout, Recheck: s.stream.Recheck}}
		if s.cache != nil {
			d.Cache = s.cache
		}
		if err := admin.Mount(*o, d); err != nil {
			return err
		}
	}
	if setup == nil {
		return nil
	}
	return admin.MountSetup(*setup, s.host)
}

// mountConsole mounts the console's room, offering the cache's
// assignments; off mounts nothing.
func (s *Server) mountConsole(on bool, uc *application.CacheOperations) error {
	if !on {
		return nil
	}
	var names []string
	if uc != nil {
		names = uc.Assignments.Names()
	}
	return console.Mount(s.host, names)
}

// CloseStreams ends every open event stream (each gets its end event);
// call it when shutdown begins (http.Server.RegisterOnShutdown), as
// http.Server.Shutdown waits for streams, which never end on their own.
func (s *Server) CloseStreams() { s.closeStreams() }

// Handler returns the server as an http.Handler.
func (s *Server) Handler() http.Handler { return s.engine }

// Handle mounts an integrator's route. It must be called before the server
// serves requests. It fails for an empty method, a path not starting with
// "/", a nil handler, or a path that clashes with a route already mounted.
func (s *Server) Handle(rt Route) error {
	switch {
	case rt.Method == "" || strings.ContainsAny(rt.Method, " /"):
		return fmt.Errorf("ginhttp: route %q: bad method %q", rt.Path, rt.Method)
	case !strings.HasPrefix(rt.Path, "/"):
		return fmt.Errorf("ginhttp: route %q: path must start with /", rt.Path)
	case rt.Handler == nil:
		return fmt.Errorf("ginhttp: route %s %s: nil handler", rt.Method, rt.Path)
	}
	return s.host.Mount(web.Route{Method: rt.Method, Path: rt.Path, Access: web.PublicIf(rt.Public), Handler: gin.WrapH(rt.Handler)})
}

// Group is a set of integrator routes under one path prefix that share
// one public marker (docs/api.md, "Routes": the public routes).
type Group struct {
	// Prefix is prepended to every route's path, e.g. "/reports".
	Prefix string
	// Public marks every route of the group public; a route's own Public
	// field can only add publicness, never take it away.
	Public bool
	Routes []Route
}

// HandleGroup mounts every route of g as Handle would, with g's prefix and
// public marker. It stops at the first route that fails.
func (s *Server) HandleGroup(g Group) error {
	if g.Prefix != "" && (!strings.HasPrefix(g.Prefix, "/") || strings.HasSuffix(g.Prefix, "/")) {
		return fmt.Errorf("ginhttp: group prefix %q must start and not end with /", g.Prefix)
	}
	for _, rt := range g.Routes {
		rt.Path = g.Prefix + rt.Path
		rt.Public = rt.Public || g.Public
		if err := s.Handle(rt); err != nil {
			return err
		}
	}
	return nil
}

// router mounts the rooms' routes on the server (web.Router).
type router struct{ s *Server }

// Mount mounts rt behind the guard (when there is an Authenticator). Gin
// panics on clashing routes; that becomes an error here.
func (r router) Mount(rt web.Route) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			err = fmt.Errorf("ginhttp: route %s %s: %v", rt.Method, rt.Path, rec)
		}
	}()
	if rt.Bare {
		r.s.engine.Handle(rt.Method, rt.Path, rt.Handler)
		return nil
	}
	r.s.engine.Handle(rt.Method, rt.Path, r.s.chain(rt)...)
	return nil
}

// chain is the handlers of a route: Pre (which runs before the guard,
// so it also shapes the guard's refusals), then, when there is an
// Authenticator, bearerFromQuery for a stream and the guard, then the
// handler.
func (s *Server) chain(rt web.Route) []gin.HandlerFunc {
	hs := append([]gin.HandlerFunc(nil), rt.Pre...)
	if s.auth != nil {
		if rt.Stream {
			hs = append(hs, bearerFromQuery)
		}
		hs = append(hs, s.guard(rt.Access))
	}
	return append(hs, rt.Handler)
}

// WriteError answers err in cachegate's error envelope, through the same
// status table as the built-in routes, for integrators' handlers
// registered with Handle: a *domain.Error gets the status of its kind
// (401 adds WWW-Authenticate: Bearer, 429 and 503 add Retry-After); anything else
// is logged with the request id and answered as a generic 500.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	s.errs.Respond(w, r, "", err)
}

// ErrorFormat chooses how 400 validation errors are rendered (README.md,
// "Coming from Rockets").
type ErrorFormat = web.ErrorFormat

// The error formats: ErrorFormatCachegate, the default envelope, has the
// field problems in details; ErrorFormatRockets renders a 400
// VALIDATION_FAILED the way Rockets clients parse it (message an array of
// {property, constraints}); every other error keeps the default envelope.
const (
	ErrorFormatCachegate = web.ErrorFormatCachegate
	ErrorFormatRockets   = web.ErrorFormatRockets
)
