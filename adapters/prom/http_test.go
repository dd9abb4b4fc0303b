package prom_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestObserveRequestLabelsStayBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		method string
		route  string
		status int
		want   map[string]string
	}{
		{"a matched route is labelled with its template", "GET", "/cache/:assignment/:id", 200,
			map[string]string{"method": "GET", "route": "/cache/:assignment/:id", "status": "200"}},
		{"an unmatched route is labelled unmatched", "GET", "", 404,
			map[string]string{"method": "GET", "route": "unmatched", "status": "404"}},
		{"an invented method is labelled other", "BREW", "/x", 405,
			map[string]string{"method": "other", "route": "/x", "status": "405"}},
		{"a lower-case method is labelled other", "get", "/x", 200,
			map[string]string{"method": "other", "route": "/x", "status": "200"}},
		{"every standard method keeps its name", "PATCH", "/x", 204,
			map[string]string{"method": "PATCH", "route": "/x", "status": "204"}},
		{"a status outside 100..599 is labelled other", "POST", "/x", 0,
			map[string]string{"method": "POST", "route": "/x", "status": "other"}},
		{"a status above 599 is labelled other", "POST", "/x", 600,
			map[string]string{"method": "POST", "route": "/x", "status": "other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMetrics(t)
			m.ObserveRequest(tc.method, tc.route, tc.status, 3*time.Millisecond)
			m.ObserveRequest(tc.method, tc.route, tc.status, 4*time.Millisecond)
			if got := value(t, m, "cachegate_http_requests_total", tc.want); got != 2 {
				t.Fatalf("requests%v = %v, want 2", tc.want, got)
			}
			hist := map[string]string{"method": tc.want["method"], "route": tc.want["route"]}
			if got := value(t, m, "cachegate_http_request_duration_seconds", hist); got != 2 {
				t.Fatalf("duration%v count = %v, want 2", hist, got)
			}
		})
	}
}

func TestObserveRequestRecordsDurationsInSeconds(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	m.ObserveRequest("GET", "/x", 200, 300*time.Microsecond)
	m.ObserveRequest("GET", "/x", 500, 2*time.Second)
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != "cachegate_http_request_duration_seconds" {
			continue
		}
		h := f.GetMetric()[0].GetHistogram()
		if got := h.GetSampleSum(); got < 2.0002 || got > 2.0004 {
			t.Fatalf("sum = %v, want 2.0003", got)
		}
		cumulative := map[float64]uint64{}
		for _, b := range h.GetBucket() {
			cumulative[b.GetUpperBound()] = b.GetCumulativeCount()
		}
		for bound, want := range map[float64]uint64{0.0005: 1, 1: 1, 2.5: 2, 5: 2} {
			if cumulative[bound] != want {
				t.Errorf("bucket le=%v holds %d, want %d", bound, cumulative[bound], want)
			}
		}
		return
	}
	t.Fatal("histogram not exported")
}

// scrape fetches the handler's output over a real listener.
func scrape(t *testing.T, url string) string {
	t.Helper()
	body, err := get(url)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// get fetches the metrics at url and checks the answer is the text format.
func get(url string) (string, error) {
	res, err := http.Get(url)
	if err != nil {
		return "", fmt.Errorf("GET /metrics: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return "", fmt.Errorf("read /metrics: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: status %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return "", fmt.Errorf("Content-Type = %q, want the text format", ct)
	}
	return string(body), nil
}

func TestHandlerServesEveryMetricInTheTextFormat(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	m.ObserveRequest("GET", "/cache/:assignment/:id", 200, time.Millisecond)
	m.LoginOutcome("success")
	m.RefreshOutcome("reused")
	m.CacheEntryCreated("sessions")
	m.CacheRowsSwept("cache", 3)
	m.WatchDB("main", fakeStats{open: 4}.stats)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)

	body := scrape(t, srv.URL)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	for _, name := range []string{
		"cachegate_http_requests_total",
		"cachegate_http_request_duration_seconds",
		"cachegate_logins_total",
		"cachegate_refreshes_total",
		"cachegate_cache_entries_created_total",
		"cachegate_cache_rows_swept_total",
		"cachegate_db_open_connections",
		"cachegate_db_wait_duration_seconds_total",
		"go_goroutines",
		"process_start_time_seconds",
		"promhttp_metric_handler_requests_total",
	} {
		if _, ok := families[name]; !ok {
			t.Errorf("%s missing from the output", name)
		}
	}
	for _, line := range []string{
		`cachegate_http_requests_total{method="GET",route="/cache/:assignment/:id",status="200"} 1`,
		`cachegate_refreshes_total{outcome="reused"} 1`,
		`cachegate_db_open_connections{db="main"} 4`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("output lacks the line %s", line)
		}
	}
}

func TestConcurrentUseIsSafeAndLosesNothing(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)

	const workers, perWorker = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				route := fmt.Sprintf("/r%d", i%10)
				m.ObserveRequest("GET", route, 200+i%3, time.Millisecond)
				m.LoginOutcome([]string{"success", "failure", "bogus"}[i%3])
				m.CacheEntryCreated("a")
				if i%50 == 0 {
					name := fmt.Sprintf("db%d", w)
					m.WatchDB(name, fakeStats{open: i}.stats)
					m.UnwatchDB(name)
				}
			}
		})
	}
	scrapeErrs := make(chan error, 5)
	wg.Go(func() {
		for range cap(scrapeErrs) {
			_, err := get(srv.URL)
			scrapeErrs <- err
		}
	})
	wg.Wait()
	close(scrapeErrs)
	for err := range scrapeErrs {
		if err != nil {
			t.Errorf("scrape during the load: %v", err)
		}
	}

	var requests float64
	for r := range 10 {
		for s := 200; s < 203; s++ {
			requests += value(t, m, "cachegate_http_requests_total",
				map[string]string{"method": "GET", "route": fmt.Sprintf("/r%d", r), "status": fmt.Sprint(s)})
		}
	}
	if requests != workers*perWorker {
		t.Errorf("%v requests counted, want %d", requests, workers*perWorker)
	}
	if got := value(t, m, "cachegate_cache_entries_created_total", map[string]string{"assignment": "a"}); got != workers*perWorker {
		t.Errorf("%v entries counted, want %d", got, workers*perWorker)
	}
	logins := 0.0
	for _, o := range []string{"success", "failure", "other"} {
		logins += value(t, m, "cachegate_logins_total", map[string]string{"outcome": o})
	}
	if logins != workers*perWorker {
		t.Errorf("%v logins counted, want %d", logins, workers*perWorker)
	}
}

func TestHandlerNegotiatesOpenMetrics(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newMetrics(t).Handler())
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, accept, wantType string
		wantEOF                bool
	}{
		{"no Accept header gets the Prometheus text format", "", "text/plain", false},
		{"Accept text/plain gets the Prometheus text format", "text/plain", "text/plain", false},
		{"Accept application/openmetrics-text gets OpenMetrics", "application/openmetrics-text", "application/openmetrics-text", true},
		{"Accept application/openmetrics-text;version=1.0.0 gets OpenMetrics",
			"application/openmetrics-text;version=1.0.0", "application/openmetrics-text", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
				t.Fatalf("Content-Type = %q, want %s", ct, tc.wantType)
			}
			// OpenMetrics ends with "# EOF"; the text format never does.
			if got := strings.HasSuffix(strings.TrimSpace(string(body)), "# EOF"); got != tc.wantEOF {
				t.Fatalf("body ends with # EOF = %v, want %v", got, tc.wantEOF)
			}
		})
	}
}
