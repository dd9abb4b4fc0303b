package prom

import (
	"database/sql"
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// dbCollector exports the connection-pool statistics of every watched
// database, read when Prometheus scrapes.
type dbCollector struct {
	mu    sync.Mutex
	stats map[string]func() sql.DBStats

	maxOpen, open, inUse, idle                      *prometheus.Desc
	waitCount, waitSeconds                          *prometheus.Desc
	maxIdleClosed, maxIdleTimeClosed, maxLifeClosed *prometheus.Desc
}

// newDBCollector returns a collector watching no database yet.
func newDBCollector() *dbCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "db", name), help, []string{"db"}, nil)
	}
	return &dbCollector{
		stats:             map[string]func() sql.DBStats{},
		maxOpen:           desc("max_open_connections", "Maximum number of open connections to the database (0: unlimited)."),
		open:              desc("open_connections", "Established connections, in use and idle."),
		inUse:             desc("in_use_connections", "Connections currently in use."),
		idle:              desc("idle_connections", "Idle connections."),
		waitCount:         desc("wait_count_total", "Connections waited for because the pool was exhausted."),
		waitSeconds:       desc("wait_duration_seconds_total", "Time spent waiting for a connection."),
		maxIdleClosed:     desc("max_idle_closed_total", "Connections closed because of the idle-connection limit."),
		maxIdleTimeClosed: desc("max_idle_time_closed_total", "Connections closed because of the idle-time limit."),
		maxLifeClosed:     desc("max_lifetime_closed_total", "Connections closed because of the lifetime limit."),
	}
}

// Describe sends the descriptors of every pool metric.
func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.maxOpen, c.open, c.inUse, c.idle, c.waitCount,
		c.waitSeconds, c.maxIdleClosed, c.maxIdleTimeClosed, c.maxLifeClosed} {
		ch <- d
	}
}

// Collect reads every watched pool's statistics now and sends them. The
// stats funcs run outside the lock, so a slow one does not block WatchDB.
func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	watched := maps.Clone(c.stats)
	c.mu.Unlock()
	for name, f := range watched {
		s := f()
		gauge := func(d *prometheus.Desc, v int) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), name)
		}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, name)
		}
		gauge(c.maxOpen, s.MaxOpenConnections)
		gauge(c.open, s.OpenConnections)
		gauge(c.inUse, s.InUse)
		gauge(c.idle, s.Idle)
		counter(c.waitCount, float64(s.WaitCount))
		counter(c.waitSeconds, s.WaitDuration.Seconds())
		counter(c.maxIdleClosed, float64(s.MaxIdleClosed))
		counter(c.maxIdleTimeClosed, float64(s.MaxIdleTimeClosed))
		counter(c.maxLifeClosed, float64(s.MaxLifetimeClosed))
	}
}

// WatchDB exports the connection-pool statistics of one database as the
// cachegate_db_* metrics of newDBCollector, labelled db=name. stats
// (typically (*sql.DB).Stats, which a *bun.DB has too) is called at every
// scrape, never in between, so it must be safe for concurrent use and
// stay cheap.
//
// Watching a name again replaces its stats func; watching nil is the
// same as UnwatchDB(name).
func (m *Metrics) WatchDB(name string, stats func() sql.DBStats) {
	if stats == nil {
		m.UnwatchDB(name)
		return
	}
	m.dbs.mu.Lock()
	defer m.dbs.mu.Unlock()
	m.dbs.stats[name] = stats
}

// UnwatchDB stops exporting the pool statistics of the database watched
// under name, for instance once it is closed; its series disappear from
// the next scrape. Unknown names are ignored.
func (m *Metrics) UnwatchDB(name string) {
	m.dbs.mu.Lock()
	defer m.dbs.mu.Unlock()
	delete(m.dbs.stats, name)
}
