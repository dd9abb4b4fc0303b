package ginhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// syncBuffer collects the log lines of concurrent requests.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// accessLines returns the access lines ("msg":"request") logged so far.
func (b *syncBuffer) accessLines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", l)
		}
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	return lines
}

type failingPinger struct{ err error }

func (p failingPinger) Ping(context.Context) error { return p.err }

func TestAccessLinesOfIdenticalFailuresAreLimitedWithACount(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	outage := fmt.Errorf("bunstore: %w: dial tcp: connection refused", domain.ErrDatabaseUnavailable)
	s, err := New(Options{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Ready:  failingPinger{outage},
		Routes: []Route{
			{Method: http.MethodGet, Path: "/broken", Public: true, Handler: http.HandlerFunc(
				func(w http.ResponseWriter, r *http.Request) { panic("broken") })},
			{Method: http.MethodGet, Path: "/full", Public: true, Handler: http.HandlerFunc(
				func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInsufficientStorage) })},
			{Method: http.MethodGet, Path: "/fine", Public: true, Handler: http.HandlerFunc(
				func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var clockMu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	advance := func(d time.Duration) { clockMu.Lock(); defer clockMu.Unlock(); now = now.Add(d) }
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	get := func(path string, want int) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	count := func(lines []map[string]any, route string, status float64) (n int, repeated []float64) {
		for _, m := range lines {
			if m["route"] == route && m["status"] == status {
				n++
				if r, ok := m["repeated"].(float64); ok {
					repeated = append(repeated, r)
				}
			}
		}
		return n, repeated
	}

	for range 1000 {
		get("/readyz", http.StatusServiceUnavailable)
	}
	get("/broken", http.StatusInternalServerError)
	get("/full", http.StatusInsufficientStorage)
	for range 3 {
		get("/fine", http.StatusNoContent)
	}
	lines := logs.accessLines(t)
	if n, rep := count(lines, "/readyz", 503); n != 1 || rep != nil {
		t.Fatalf("1000 identical failures wrote %d access lines (repeated %v), want 1 without a count", n, rep)
	}
	for _, m := range lines {
		if m["route"] == "/readyz" && m["code"] != "DATABASE_UNAVAILABLE" {
			t.Errorf("the failure's line names code %v, want DATABASE_UNAVAILABLE", m["code"])
		}
	}
	if n, _ := count(lines, "/broken", 500); n != 1 {
		t.Errorf("a different failure (500) wrote %d access lines, want 1: merged with the 503s?", n)
	}
	if n, _ := count(lines, "/full", 507); n != 1 {
		t.Errorf("a different failure (507) wrote %d access lines, want 1", n)
	}
	if n, _ := count(lines, "/fine", 204); n != 3 {
		t.Errorf("3 successes wrote %d access lines, want one each", n)
	}

	// Within the interval the failure stays quiet; after it, one line
	// says how many were left out.
	advance(web.OutageLogInterval - time.Second)
	get("/readyz", http.StatusServiceUnavailable)
	advance(time.Second)
	get("/readyz", http.StatusServiceUnavailable)
	n, rep := count(logs.accessLines(t), "/readyz", 503)
	if n != 2 || len(rep) != 1 || rep[0] != 1000 {
		t.Fatalf("after the interval: %d access lines with repeated %v, want 2 lines, the second with repeated=1000", n, rep)
	}
}

func TestAccessLinesOfFailuresKeepTheirIdentity(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	s, err := New(Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return at }
	ctx := context.Background()
	for range 5 {
		for _, l := range []struct {
			method, route string
			status        int
			code          string
		}{
			{"GET", "/cache/:assignment", 503, "DATABASE_UNAVAILABLE"},
			{"POST", "/cache/:assignment", 503, "DATABASE_UNAVAILABLE"},
			{"GET", "/cache/:assignment/:id", 503, "DATABASE_UNAVAILABLE"},
			{"POST", "/cache/:assignment", 507, "STORAGE_FULL"},
			{"POST", "/cache/:assignment", 503, "NOT_READY"},
		} {
			s.logAccess(ctx, l.method, l.route, l.status, l.code, time.Millisecond, "127.0.0.1")
		}
		s.logAccess(ctx, "GET", "/cache/:assignment", 404, "", time.Millisecond, "127.0.0.1")
	}
	lines := logs.accessLines(t)
	seen := map[string]int{}
	for _, m := range lines {
		seen[fmt.Sprint(m["method"], m["route"], m["status"], m["code"])]++
	}
	if len(lines) != 10 || len(seen) != 6 {
		t.Fatalf("%d lines of %d identities, want 5 failures once each and 5 lines of the 404: %v", len(lines), len(seen), seen)
	}
	if seen[fmt.Sprint("GET", "/cache/:assignment", 404.0, nil)] != 5 {
		t.Errorf("a client error (404) was limited: %v", seen)
	}
}
