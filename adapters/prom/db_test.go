package prom_test

import (
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeStats is a pool whose statistics are fixed.
type fakeStats struct {
	open int
}

// stats returns the fixed statistics of f.
func (f fakeStats) stats() sql.DBStats {
	return sql.DBStats{
		MaxOpenConnections: 10,
		OpenConnections:    f.open,
		InUse:              3,
		Idle:               f.open - 3,
		WaitCount:          5,
		WaitDuration:       1500 * time.Millisecond,
		MaxIdleClosed:      6,
		MaxIdleTimeClosed:  7,
		MaxLifetimeClosed:  8,
	}
}

const wantDBMetrics = `
# HELP cachegate_db_idle_connections Idle connections.
# TYPE cachegate_db_idle_connections gauge
cachegate_db_idle_connections{db="main"} 1
# HELP cachegate_db_in_use_connections Connections currently in use.
# TYPE cachegate_db_in_use_connections gauge
cachegate_db_in_use_connections{db="main"} 3
# HELP cachegate_db_max_idle_closed_total Connections closed because of the idle-connection limit.
# TYPE cachegate_db_max_idle_closed_total counter
cachegate_db_max_idle_closed_total{db="main"} 6
# HELP cachegate_db_max_idle_time_closed_total Connections closed because of the idle-time limit.
# TYPE cachegate_db_max_idle_time_closed_total counter
cachegate_db_max_idle_time_closed_total{db="main"} 7
# HELP cachegate_db_max_lifetime_closed_total Connections closed because of the lifetime limit.
# TYPE cachegate_db_max_lifetime_closed_total counter
cachegate_db_max_lifetime_closed_total{db="main"} 8
# HELP cachegate_db_max_open_connections Maximum number of open connections to the database (0: unlimited).
# TYPE cachegate_db_max_open_connections gauge
cachegate_db_max_open_connections{db="main"} 10
# HELP cachegate_db_open_connections Established connections, in use and idle.
# TYPE cachegate_db_open_connections gauge
cachegate_db_open_connections{db="main"} 4
# HELP cachegate_db_wait_count_total Connections waited for because the pool was exhausted.
# TYPE cachegate_db_wait_count_total counter
cachegate_db_wait_count_total{db="main"} 5
# HELP cachegate_db_wait_duration_seconds_total Time spent waiting for a connection.
# TYPE cachegate_db_wait_duration_seconds_total counter
cachegate_db_wait_duration_seconds_total{db="main"} 1.5
`

// dbMetricNames are the families WatchDB exports.
var dbMetricNames = []string{
	"cachegate_db_idle_connections", "cachegate_db_in_use_connections",
	"cachegate_db_max_idle_closed_total", "cachegate_db_max_idle_time_closed_total",
	"cachegate_db_max_lifetime_closed_total", "cachegate_db_max_open_connections",
	"cachegate_db_open_connections", "cachegate_db_wait_count_total",
	"cachegate_db_wait_duration_seconds_total",
}

func TestWatchDBExportsThePoolStatistics(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	m.WatchDB("main", fakeStats{open: 4}.stats)
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(wantDBMetrics), dbMetricNames...); err != nil {
		t.Fatal(err)
	}
}

func TestWatchDBReadsTheStatsAtEveryScrape(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	var calls atomic.Int64
	m.WatchDB("main", func() sql.DBStats { return fakeStats{open: int(calls.Add(1))}.stats() })
	if n := calls.Load(); n != 0 {
		t.Fatalf("stats read %d times before any scrape", n)
	}
	for want := 1.0; want <= 3; want++ {
		if got := value(t, m, "cachegate_db_open_connections", map[string]string{"db": "main"}); got != want {
			t.Fatalf("scrape %v: open = %v", want, got)
		}
	}
}

func TestWatchDBKeepsEachDatabaseApartAndCanStop(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	m.WatchDB("primary", fakeStats{open: 4}.stats)
	m.WatchDB("replica", fakeStats{open: 9}.stats)
	if got := testutil.CollectAndCount(m.Registry(), "cachegate_db_open_connections"); got != 2 {
		t.Fatalf("%d series of open connections, want 2", got)
	}
	for _, tc := range []struct {
		name string
		db   string
		want float64
	}{
		{"the first database keeps its figures", "primary", 4},
		{"the second database keeps its figures", "replica", 9},
	} {
		if got := value(t, m, "cachegate_db_open_connections", map[string]string{"db": tc.db}); got != tc.want {
			t.Errorf("%s: open = %v, want %v", tc.name, got, tc.want)
		}
	}

	m.WatchDB("primary", fakeStats{open: 5}.stats)
	if got := value(t, m, "cachegate_db_open_connections", map[string]string{"db": "primary"}); got != 5 {
		t.Errorf("watching a name again did not replace it: open = %v, want 5", got)
	}

	m.UnwatchDB("primary")
	m.WatchDB("replica", nil)
	m.UnwatchDB("never watched")
	if got := testutil.CollectAndCount(m.Registry(), dbMetricNames...); got != 0 {
		t.Fatalf("%d database series left after unwatching, want 0", got)
	}
}
