package prom_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// samplesOf are the sample name suffixes of each OpenMetrics family type.
var samplesOf = map[string][]string{
	"counter":        {"_total", "_created"},
	"gauge":          {""},
	"histogram":      {"_bucket", "_count", "_sum", "_created", "_gcount", "_gsum"},
	"gaugehistogram": {"_bucket", "_gcount", "_gsum"},
	"summary":        {"", "_count", "_sum", "_created"},
	"info":           {"_info"},
	"stateset":       {""},
	"unknown":        {""},
}

// TestOpenMetricsFamiliesHaveDistinctNames checks the OpenMetrics scrape
// as a strict parser reads it: each family named once, and each sample
// named after the family declared before it (test/e2e runs Python's
// parser on a server's scrape).
func TestOpenMetricsFamiliesHaveDistinctNames(t *testing.T) {
	t.Parallel()
	m := newMetrics(t)
	m.ObserveRequest("GET", "/x", 200, time.Millisecond)
	m.WatchDB("main", fakeStats{open: 1}.stats)
	r := httptest.NewRequest("GET", "/metrics", nil)
	r.Header.Set("Accept", "application/openmetrics-text")
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, r)
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q, want OpenMetrics", ct)
	}
	body, _ := io.ReadAll(w.Body)

	seen := map[string]bool{}
	family, suffixes := "", []string(nil)
	for i, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		switch {
		case line == "# EOF":
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if len(f) != 4 || samplesOf[f[3]] == nil {
				t.Fatalf("line %d: %q", i+1, line)
			}
			family, suffixes = f[2], samplesOf[f[3]]
			if seen[family] {
				t.Errorf("line %d: a second family named %s", i+1, family)
			}
			seen[family] = true
		case strings.HasPrefix(line, "#"):
		default:
			name, _, _ := strings.Cut(line, " ")
			name, _, _ = strings.Cut(name, "{")
			ok := false
			for _, s := range suffixes {
				ok = ok || name == family+s
			}
			if !ok {
				t.Errorf("line %d: sample %s is no sample of the family %s before it", i+1, name, family)
			}
		}
	}
	if len(seen) < 10 {
		t.Fatalf("only %d families in the scrape:\n%s", len(seen), body)
	}
}
