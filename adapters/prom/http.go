package prom

import (
	"cmp"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// maxCachedSeries bounds the cache of request series. Past it, series are
// still counted, only looked up the slower way; with route templates the
// real number stays far below.
const maxCachedSeries = 4096

// requestKey is the label set ObserveRequest receives, before
// normalisation.
type requestKey struct {
	method, route string
	status        int
}

// requestSeries are the metric children one requestKey updates.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// ObserveRequest counts one HTTP request answered with status after d, in
// cachegate_http_requests_total{method,route,status} and
// cachegate_http_request_duration_seconds{method,route}.
//
// route must be the route template ("/cache/:assignment/:id"), never the
// raw path, so the series stay bounded; "" (no route matched) is labelled
// "unmatched". Methods other than the standard HTTP ones are labelled
// "other", and so are statuses outside 100..599.
//
// It runs on every request: after the first request of a given label set
// it takes no lock and allocates nothing.
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	k := requestKey{method, route, status}
	s, ok := (*m.series.Load())[k]
	if !ok {
		s = m.newSeries(k)
	}
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

// newSeries resolves the children of k and caches them in a map replaced
// on every insertion (copy on write), so reads are one atomic load.
func (m *Metrics) newSeries(k requestKey) requestSeries {
	method, route, status := labels(k)
	s := requestSeries{
		count:    m.requests.WithLabelValues(method, route, status),
		duration: m.duration.WithLabelValues(method, route),
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	old := *m.series.Load()
	if _, ok := old[k]; ok || len(old) >= maxCachedSeries {
		return s
	}
	next := maps.Clone(old)
	next[k] = s
	m.series.Store(&next)
	return s
}

// labels returns the bounded label values of k.
func labels(k requestKey) (method, route, status string) {
	switch k.method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		method = k.method
	default:
		method = Other
	}
	route = cmp.Or(k.route, Unmatched)
	status = Other
	if k.status >= 100 && k.status <= 599 {
		status = strconv.Itoa(k.status)
	}
	return method, route, status
}
