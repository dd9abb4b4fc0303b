// Package cachefx is the fx module of the cache feature (README,
// "Configuration"; docs/api.md, "The Go API").
//
// ForRoot and ForRootAsync register the app-wide cache: they provide
// *application.CacheOperations (which the HTTP module serves) and the Go API
// *application.Cache. Register and RegisterAsync register a named feature
// instance (ARCHITECTURE.md, "NestJS registration modes and fx").
//
// Every mode requires a RepoFactory (storefx provides one), a ports.Clock
// and a ports.IDGenerator; a ports.Metrics and an *background.Feed are used
// when present.
package cachefx

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/oteltrace"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/bootstrap/tracefx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// RepoFactory returns the repository of one entity's table.
type RepoFactory func(table string) (ports.CacheRepository, error)

// Assignment configures the route family /cache/<Name>.
type Assignment struct {
	Name      string
	EntityKey string
	// Table is the entity's table.
	Table  string
	Policy domain.Policy
	// DefaultExpiresIn applies to entries given expiresIn null; zero
	// means no expiry.
	DefaultExpiresIn time.Duration
	// Quota bounds what each assignee may keep through this assignment.
	// The zero Quota limits nothing; the binary's configuration gives
	// every assignment domain.DefaultQuota unless told otherwise.
	Quota domain.Quota
}

// Options configure the cache feature.
type Options struct {
	Assignments []Assignment
	// MaxDataBytes bounds an entry's data (default 256 KiB).
	MaxDataBytes int
	// ListDefault and ListMax are the default and largest page size of
	// lists (defaults 100 and 1000).
	ListDefault int
	ListMax     int
}

// Validate reports every problem of o at once.
func (o Options) Validate() error {
	var errs []error
	if len(o.Assignments) == 0 {
		errs = append(errs, errors.New("cache: no assignment configured"))
	}
	tables := map[string]string{}
	for _, a := range o.Assignments {
		if a.Table == "" {
			errs = append(errs, fmt.Errorf("cache assignment %q: no table", a.Name))
		}
		if other, ok := tables[a.Table]; ok && other != a.EntityKey {
			errs = append(errs, fmt.Errorf("cache assignment %q: table %q belongs to entity %q", a.Name, a.Table, other))
		}
		tables[a.Table] = a.EntityKey
		if _, ok := domain.ParsePolicy(a.Policy.String()); !ok {
			errs = append(errs, fmt.Errorf("cache assignment %q: no policy", a.Name))
		}
		if _, err := domain.NewQuota(a.Quota.MaxEntries, a.Quota.MaxBytes); err != nil {
			errs = append(errs, fmt.Errorf("cache assignment %q: %w", a.Name, err))
		}
	}
	if o.MaxDataBytes < 0 {
		errs = append(errs, errors.New("cache: negative data limit"))
	}
	return errors.Join(errs...)
}

// Tables returns the distinct tables of o, in order.
func (o Options) Tables() []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range o.Assignments {
		if !seen[a.Table] {
			seen[a.Table] = true
			out = append(out, a.Table)
		}
	}
	return out
}

// Deps are what the cache feature needs from the graph.
type Deps struct {
	fx.In
	Repos   RepoFactory
	Clock   ports.Clock
	IDs     ports.IDGenerator
	Metrics ports.Metrics `optional:"true"`
	// Feed, when present, serves Watch and sees this feature's writes at
	// once (feedfx provides it).
	Feed *background.Feed `optional:"true"`
	// Tracing, when its Provider is set, wraps each use case in a span.
	Tracing tracefx.Tracing `optional:"true"`
}

// New builds the use cases from options and dependencies; it is the plain
// constructor the modules call, usable without fx.
func New(o Options, d Deps) (*application.CacheOperations, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	repos := map[string]ports.CacheRepository{}
	var stores []application.Assignment
	for _, a := range o.Assignments {
		r, ok := repos[a.Table]
		if !ok {
			var err error
			if r, err = d.Repos(a.Table); err != nil {
				return nil, fmt.Errorf("cache assignment %q: %w", a.Name, err)
			}
			if d.Feed != nil {
				r = d.Feed.Observe(r)
			}
			repos[a.Table] = r
		}
		stores = append(stores, application.Assignment{Name: a.Name, EntityKey: a.EntityKey, Table: a.Table, Repo: r,
			Policy: a.Policy, DefaultExpiresIn: a.DefaultExpiresIn, Quota: a.Quota})
	}
	s, err := application.NewAssignments(stores...)
	if err != nil {
		return nil, err
	}
	// A nil *background.Feed must reach the use cases as a nil interface,
	// which they read as "no feed", not as an interface holding nil.
	var feed application.ChangeFeed
	if d.Feed != nil {
		feed = d.Feed
	}
	var tracer ports.Tracer
	if d.Tracing.Provider != nil {
		tracer = oteltrace.NewTracer(d.Tracing.Provider)
	}
	return application.NewCacheOperations(application.CacheConfig{Assignments: s, Clock: d.Clock, IDs: d.IDs,
		MaxDataBytes: o.MaxDataBytes, Metrics: d.Metrics, ListDefault: o.ListDefault, ListMax: o.ListMax, Feed: feed,
		Tracer: tracer})
}

// ForRoot registers the app-wide cache with options given directly.
func ForRoot(o Options) fx.Option {
	return root(fx.Supply(fx.Private, o))
}

// ForRootAsync registers the app-wide cache with options built by build,
// whose parameter D fx injects (a struct embedding fx.In, or any single
// provided type).
func ForRootAsync[D any](build func(D) (Options, error)) fx.Option {
	return root(fx.Provide(fx.Private, build))
}

func root(options fx.Option) fx.Option {
	return fx.Module("cache", options, fx.Provide(New, application.NewCache))
}

// Register registers a cache feature instance named name with options
// given directly. Its Go API is provided as *application.Cache tagged
// `name:"cache.<name>"`; its use cases join the value group "cache_features".
func Register(name string, o Options) fx.Option {
	return feature(name, fx.Supply(fx.Private, o))
}

// RegisterAsync is Register with options built by an injected constructor.
func RegisterAsync[D any](name string, build func(D) (Options, error)) fx.Option {
	return feature(name, fx.Provide(fx.Private, build))
}

func feature(name string, options fx.Option) fx.Option {
	return fx.Module("cache."+name,
		options,
		fx.Provide(fx.Private, New),
		fx.Provide(
			fx.Annotate(application.NewCache, fx.ResultTags(`name:"cache.`+name+`"`)),
			fx.Annotate(func(uc *application.CacheOperations) *application.CacheOperations { return uc },
				fx.ResultTags(`group:"cache_features"`)),
		),
	)
}
