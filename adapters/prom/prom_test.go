package prom_test

import (
	"math"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/prom"
	"github.com/cachegate/cachegate/ports"
)

var _ ports.Metrics = (*prom.Metrics)(nil)

func TestNewRejectsInvalidBuckets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		buckets []float64
		want    string // substring of the error; "" means accepted
	}{
		{"nil buckets take the defaults", nil, ""},
		{"increasing positive buckets are accepted", []float64{0.1, 1, 10}, ""},
		{"an empty list is refused", []float64{}, "empty"},
		{"a zero bound is refused", []float64{0, 1}, "buckets[0]"},
		{"a negative bound is refused", []float64{-1, 1}, "buckets[0]"},
		{"an infinite bound is refused", []float64{1, math.Inf(1)}, "buckets[1]"},
		{"NaN is refused", []float64{math.NaN()}, "buckets[0]"},
		{"a repeated bound is refused", []float64{1, 1}, "buckets[1]"},
		{"a decreasing bound is refused", []float64{1, 2, 0.5}, "buckets[2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := prom.New(prom.Options{Buckets: tc.buckets})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.want == "" && m == nil:
				t.Fatal("New returned nil without error")
			case tc.want != "" && err == nil:
				t.Fatalf("New accepted %v", tc.buckets)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestCustomBucketsShapeTheHistogram(t *testing.T) {
	t.Parallel()
	m, err := prom.New(prom.Options{Buckets: []float64{0.1, 1}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m.ObserveRequest("GET", "/x", 200, 0)
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() == "cachegate_http_request_duration_seconds" {
			if n := len(f.GetMetric()[0].GetHistogram().GetBucket()); n != 2 {
				t.Fatalf("%d buckets, want 2", n)
			}
			return
		}
	}
	t.Fatal("histogram not exported")
}

func TestOutcomesAreCountedUnderBoundedLabels(t *testing.T) {
	t.Parallel()
	type record func(*prom.Metrics, string)
	login := func(m *prom.Metrics, o string) { m.LoginOutcome(o) }
	refresh := func(m *prom.Metrics, o string) { m.RefreshOutcome(o) }
	for _, tc := range []struct {
		name    string
		record  record
		family  string
		outcome string
		label   string
	}{
		{"a successful login counts as success", login, "cachegate_logins_total", "success", "success"},
		{"a failed login counts as failure", login, "cachegate_logins_total", "failure", "failure"},
		{"a throttled login counts as throttled", login, "cachegate_logins_total", "throttled", "throttled"},
		{"an unknown login outcome counts as other", login, "cachegate_logins_total", "exploded", "other"},
		{"an empty login outcome counts as other", login, "cachegate_logins_total", "", "other"},
		{"a rotated refresh counts as rotated", refresh, "cachegate_refreshes_total", "rotated", "rotated"},
		{"a refresh forgiven within the grace window counts as reissued", refresh, "cachegate_refreshes_total", "reissued", "reissued"},
		{"a reused refresh counts as reused", refresh, "cachegate_refreshes_total", "reused", "reused"},
		{"a rejected refresh counts as rejected", refresh, "cachegate_refreshes_total", "rejected", "rejected"},
		{"an unknown refresh outcome counts as other", refresh, "cachegate_refreshes_total", "Rotated", "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMetrics(t)
			tc.record(m, tc.outcome)
			tc.record(m, tc.outcome)
			if got := value(t, m, tc.family, map[string]string{"outcome": tc.label}); got != 2 {
				t.Fatalf("%s{outcome=%q} = %v, want 2", tc.family, tc.label, got)
			}
			if tc.label != tc.outcome {
				if _, ok := sample(t, m, tc.family, map[string]string{"outcome": tc.outcome}); ok {
					t.Fatalf("a series labelled %q was created", tc.outcome)
				}
			}
		})
	}
}

func TestKnownOutcomesAreExportedAsZeroFromTheStart(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	for family, outcomes := range map[string][]string{
		"cachegate_logins_total":    {"success", "failure", "throttled", "other"},
		"cachegate_refreshes_total": {"rotated", "reissued", "reused", "rejected", "other"},
	} {
		for _, o := range outcomes {
			if got := value(t, m, family, map[string]string{"outcome": o}); got != 0 {
				t.Errorf("%s{outcome=%q} = %v, want 0", family, o, got)
			}
		}
	}
}

func TestCacheEventsAreCountedPerAssignmentAndStore(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	m.CacheEntryCreated("sessions")
	m.CacheEntryCreated("sessions")
	m.CacheEntryCreated("carts")
	m.CacheRowsSwept("cache", 5)
	m.CacheRowsSwept("cache", 7)
	m.CacheRowsSwept("refresh_tokens", 0)
	m.CacheRowsSwept("refresh_tokens", -3)

	for _, tc := range []struct {
		name   string
		family string
		labels map[string]string
		want   float64
	}{
		{"entries are counted per assignment", "cachegate_cache_entries_created_total", map[string]string{"assignment": "sessions"}, 2},
		{"assignments do not share a count", "cachegate_cache_entries_created_total", map[string]string{"assignment": "carts"}, 1},
		{"swept rows add up", "cachegate_cache_rows_swept_total", map[string]string{"store": "cache"}, 12},
		{"an empty or negative sweep adds nothing but shows the store", "cachegate_cache_rows_swept_total", map[string]string{"store": "refresh_tokens"}, 0},
	} {
		if got := value(t, m, tc.family, tc.labels); got != tc.want {
			t.Errorf("%s: %s%v = %v, want %v", tc.name, tc.family, tc.labels, got, tc.want)
		}
	}
}

func TestTwoInstancesDoNotCollide(t *testing.T) {
	t.Parallel()
	a, b := newMetrics(t), newMetrics(t)
	if a.Registry() == b.Registry() {
		t.Fatal("instances share a registry")
	}
	a.LoginOutcome("success")
	a.ObserveRequest("GET", "/x", 200, 0)
	a.WatchDB("main", fakeStats{}.stats)
	if got := value(t, a, "cachegate_logins_total", map[string]string{"outcome": "success"}); got != 1 {
		t.Fatalf("first instance: %v logins, want 1", got)
	}
	if got := value(t, b, "cachegate_logins_total", map[string]string{"outcome": "success"}); got != 0 {
		t.Fatalf("second instance: %v logins, want 0", got)
	}
	if _, ok := sample(t, b, "cachegate_http_requests_total", map[string]string{"method": "GET", "route": "/x", "status": "200"}); ok {
		t.Fatal("a request observed on one instance shows on the other")
	}
	if _, ok := sample(t, b, "cachegate_db_open_connections", map[string]string{"db": "main"}); ok {
		t.Fatal("a database watched on one instance shows on the other")
	}
}
