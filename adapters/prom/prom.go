package prom

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Namespace prefixes every metric this package defines.
const Namespace = "cachegate"

// Other is the label value that counts outcomes and HTTP methods outside
// the known sets, so a caller's typo or a client's invented method cannot
// create new series.
const Other = "other"

// Unmatched is the route label of requests that matched no route.
const Unmatched = "unmatched"

// DefaultBuckets are the request-duration histogram buckets, in seconds,
// dense at the low end where a cache service answers.
var DefaultBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// The outcomes LoginOutcome and RefreshOutcome count; anything else counts
// as Other.
var (
	loginOutcomes   = []string{"success", "failure", "throttled"}
	refreshOutcomes = []string{"rotated", "reissued", "reused", "rejected"}
)

// Options configures New. The zero value is ready to use.
type Options struct {
	// Buckets are the upper bounds, in seconds, of the request-duration
	// histogram: positive, finite and strictly increasing. Nil means
	// DefaultBuckets.
	Buckets []float64
	// Logger receives errors met while serving a scrape; nil discards
	// them.
	Logger *slog.Logger
}

// validate returns every problem in o, joined.
func (o Options) validate() error {
	if o.Buckets == nil {
		return nil
	}
	var errs []error
	if len(o.Buckets) == 0 {
		errs = append(errs, errors.New("buckets: empty (leave nil for the defaults)"))
	}
	for i, b := range o.Buckets {
		switch {
		case math.IsNaN(b) || math.IsInf(b, 0) || b <= 0:
			errs = append(errs, fmt.Errorf("buckets[%d]: %v is not a positive finite number of seconds", i, b))
		case i > 0 && b <= o.Buckets[i-1]:
			errs = append(errs, fmt.Errorf("buckets[%d]: %v does not exceed the bucket before it (%v)", i, b, o.Buckets[i-1]))
		}
	}
	return errors.Join(errs...)
}

// Metrics records cachegate's metrics in its own registry. It implements
// ports.Metrics; the zero value is not usable, build one with New. All
// methods are safe for concurrent use.
type Metrics struct {
	registry *prometheus.Registry
	handler  http.Handler

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series caches the label children of each (method, route, status)
	// seen by ObserveRequest; see requestSeries.
	series   atomic.Pointer[map[requestKey]requestSeries]
	seriesMu sync.Mutex

	logins    map[string]prometheus.Counter
	refreshes map[string]prometheus.Counter
	audits    map[string]prometheus.Counter
	created   *prometheus.CounterVec
	swept     *prometheus.CounterVec

	dbs *dbCollector

	feed feedMetrics
}

var _ ports.Metrics = (*Metrics)(nil)

// New builds a Metrics with a fresh registry holding cachegate's metrics,
// the Go runtime and process collectors, and the scrape handler's own
// metrics. It fails only on invalid Options.
func New(o Options) (*Metrics, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("prom options: %w", err)
	}
	// Copied, so later changes to either slice do not reach the histogram.
	buckets := slices.Clone(DefaultBuckets)
	if o.Buckets != nil {
		buckets = slices.Clone(o.Buckets)
	}
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: counterVec("http", "requests_total", "HTTP requests answered, by method, route template and status code.",
			"method", "route", "status"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time to answer an HTTP request, by method and route template.",
			Buckets: buckets,
		}, []string{"method", "route"}),
		created: counterVec("", "cache_entries_created_total", "Cache entries created, by assignment.", "assignment"),
		swept:   counterVec("", "cache_rows_swept_total", "Rows the sweeper removed (expired or deleted), by store.", "store"),
		dbs:     newDBCollector(),
		feed:    newFeedMetrics(),
	}
	m.series.Store(&map[requestKey]requestSeries{})
	logins := counterVec("", "logins_total", "Login attempts, by outcome (success, failure, throttled, other).", "outcome")
	refreshes := counterVec("", "refreshes_total", "Refresh-token uses, by outcome (rotated, reissued, reused, rejected, other).", "outcome")
	audits := counterVec("", "audit_events_total", "Security events of the audit trail, by type (login.failed, refresh.reused, ...).", "type")
	m.logins = children(logins, loginOutcomes)
	m.refreshes = children(refreshes, refreshOutcomes)
	m.audits = children(audits, domain.AuditTypes())

	var errs []error
	for _, c := range append([]prometheus.Collector{goCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, logins, refreshes, audits, m.created, m.swept, m.dbs}, m.feed.collectors()...) {
		errs = append(errs, m.registry.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		// Unreachable with a fresh registry and fixed, distinct names.
		return nil, fmt.Errorf("prom register: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The handler is built once: instrumenting it registers the
	// promhttp_metric_handler_* metrics, which may happen only once.
	m.handler = promhttp.InstrumentMetricHandler(m.registry, promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog: errorLog{log},
		// A failing collector (say a database stats func) must not hide
		// every other metric: serve what was gathered.
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.registry,
		EnableOpenMetrics: true, // see Handler
	}))
	return m, nil
}

// counterVec returns the counter family cachegate_[subsystem_]name.
func counterVec(subsystem, name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: subsystem, Name: name, Help: help}, labels)
}

// children pre-creates the series of every known value plus Other, so they
// are exported as zero from the start and looked up without locking.
func children[S ~string](v *prometheus.CounterVec, known []S) map[string]prometheus.Counter {
	c := map[string]prometheus.Counter{Other: v.WithLabelValues(Other)}
	for _, k := range known {
		c[string(k)] = v.WithLabelValues(string(k))
	}
	return c
}

// Registry returns the registry holding m's metrics, for an embedder to
// register collectors of its own or to gather directly.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Handler serves m's registry in the Prometheus text format, or in
// OpenMetrics when the request's Accept header asks for
// application/openmetrics-text (README.md, "What the API does"). It is the
// same handler on every call.
func (m *Metrics) Handler() http.Handler { return m.handler }

// LoginOutcome implements ports.Metrics; any other outcome counts as "other".
func (m *Metrics) LoginOutcome(outcome string) { count(m.logins, outcome) }

// AuditEvent implements ports.Metrics; an unknown type counts as "other".
func (m *Metrics) AuditEvent(typ string) { count(m.audits, typ) }

// RefreshOutcome implements ports.Metrics; any other outcome counts as
// "other".
func (m *Metrics) RefreshOutcome(outcome string) { count(m.refreshes, outcome) }

// count increments the child of outcome, or of Other when outcome is not
// one of the known values.
func count(c map[string]prometheus.Counter, outcome string) {
	ctr, ok := c[outcome]
	if !ok {
		ctr = c[Other]
	}
	ctr.Inc()
}

// CacheEntryCreated counts one entry created in assignment. Assignment
// names come from configuration, so the label stays bounded; callers count
// only entries actually created.
func (m *Metrics) CacheEntryCreated(assignment string) {
	m.created.WithLabelValues(assignment).Inc()
}

// CacheRowsSwept adds n rows removed by the sweeper of store. A sweep that
// removed nothing (n <= 0) still makes the store's series appear, at its
// current value, so dashboards see the sweeper is alive.
func (m *Metrics) CacheRowsSwept(store string, n int) {
	c := m.swept.WithLabelValues(store)
	if n > 0 {
		c.Add(float64(n))
	}
}

// errorLog adapts a slog.Logger to promhttp.Logger.
type errorLog struct{ log *slog.Logger }

// Println logs a scrape error at Warn.
func (l errorLog) Println(v ...any) {
	l.log.Warn("metrics scrape", slog.String("error", fmt.Sprint(v...)))
}
