package ginhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

func TestStatusTable(t *testing.T) {
	t.Parallel()
	for k, want := range map[domain.Kind]int{
		domain.KindInvalid: 400, domain.KindNotFound: 404, domain.KindConflict: 409,
		domain.KindPreconditionFailed: 412, domain.KindUnauthenticated: 401, domain.KindForbidden: 403,
		domain.KindTooMany: 429, domain.KindUnavailable: 503, domain.KindStorageFull: 507,
		domain.KindTooExpensive: 422, domain.KindUnprocessable: 422, domain.KindInternal: 500, domain.Kind(200): 500,
	} {
		if got := web.StatusOf(k); got != want {
			t.Errorf("%v: %d, want %d", k, got, want)
		}
	}
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	s, err := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		err     error
		status  int
		body    string
		headers map[string]string
	}{
		{"a validation error lists its fields", domain.InvalidField("key", "must be a string"), 400,
			`{"statusCode":400,"message":"invalid request: key: must be a string","errorCode":"VALIDATION_FAILED","details":[{"field":"key","message":"must be a string"}]}`, nil},
		{"a wrapped sentinel keeps its code", fmt.Errorf("create: %w", domain.ErrCacheEntityAlreadyExists), 409,
			`{"statusCode":409,"message":"a cache entry with this key, type and assignee already exists","errorCode":"CACHE_ENTITY_ALREADY_EXISTS"}`, nil},
		{"unauthenticated says Unauthorized and asks for a bearer token", domain.ErrUnauthenticated, 401,
			`{"statusCode":401,"message":"Unauthorized","errorCode":"UNAUTHORIZED"}`, map[string]string{"WWW-Authenticate": "Bearer"}},
		{"throttling tells when to retry, rounded up", domain.TooMany(1500 * time.Millisecond), 429, "",
			map[string]string{"Retry-After": "2"}},
		{"throttling without a delay still says one second", domain.TooMany(0), 429, "", map[string]string{"Retry-After": "1"}},
		{"a database that does not answer is 503 with a pause to retry after",
			fmt.Errorf("get: %w", domain.ErrDatabaseUnavailable), 503,
			`{"statusCode":503,"message":"the database is unavailable; try again later","errorCode":"DATABASE_UNAVAILABLE"}`,
			map[string]string{"Retry-After": "2"}},
		{"a query past its time bound is 422, the caller's to change", fmt.Errorf("list: %w", domain.ErrQueryTooExpensive), 422,
			`{"statusCode":422,"message":"the query took longer than the database may spend on it; narrow the filter or use a smaller limit","errorCode":"QUERY_TOO_EXPENSIVE"}`, nil},
		{"a full disk is 507", domain.ErrStorageFull, 507,
			`{"statusCode":507,"message":"the database's storage is full; reads still work, writes fail until space is freed","errorCode":"STORAGE_FULL"}`, nil},
		{"any other error is a generic 500", errors.New("pq: password authentication failed for hunter2"), 500,
			`{"statusCode":500,"message":"Internal Server Error","errorCode":"INTERNAL"}`, nil},
		{"a protocol error has its own status", web.PayloadTooLarge(10), 413,
			`{"statusCode":413,"message":"the request body is larger than the limit of 10 bytes","errorCode":"PAYLOAD_TOO_LARGE"}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			w.Header().Set(HeaderRequestID, "rid-1")
			s.WriteError(w, httptest.NewRequest(http.MethodGet, "/x", nil), c.err)
			if w.Code != c.status {
				t.Errorf("status %d, want %d", w.Code, c.status)
			}
			if c.body != "" && w.Body.String() != c.body {
				t.Errorf("body %s\nwant %s", w.Body, c.body)
			}
			if !json.Valid(w.Body.Bytes()) || w.Header().Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("not a JSON answer: %q %s", w.Header().Get("Content-Type"), w.Body)
			}
			for k, v := range c.headers {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
	t.Cleanup(func() {
		if n := strings.Count(logs.String(), "hunter2"); n != 1 {
			t.Errorf("the internal error was logged %d times, want once: %s", n, logs.String())
		}
		if !strings.Contains(logs.String(), "request_id=rid-1") {
			t.Errorf("the log line lacks the request id: %s", logs.String())
		}
	})
}

func TestAbandonedRequestIsNotAnError(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	s, err := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	s.WriteError(w, httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx), fmt.Errorf("query: %w", context.Canceled))
	if w.Code != web.StatusClientClosed {
		t.Errorf("status %d, want %d", w.Code, web.StatusClientClosed)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a request its client abandoned was logged as an error:\n%s", logs.String())
	}
	w = httptest.NewRecorder()
	s.WriteError(w, httptest.NewRequest(http.MethodGet, "/x", nil), fmt.Errorf("query: %w", context.Canceled))
	if w.Code != http.StatusInternalServerError {
		t.Errorf("a cancellation the client did not cause answered %d, want 500", w.Code)
	}
}

func TestRepeatedDatabaseFailuresAreLoggedOncePerIntervalWithACount(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	s, err := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	outage := fmt.Errorf("bunstore: %w: dial tcp: connection refused", domain.ErrDatabaseUnavailable)
	for range 1000 {
		s.WriteError(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil), outage)
	}
	s.WriteError(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil), domain.ErrStorageFull)
	if n := strings.Count(logs.String(), "connection refused"); n != 1 {
		t.Fatalf("1000 identical failures logged %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "STORAGE_FULL"); n != 1 {
		t.Fatalf("a different failure was logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestLogLimiterCountsWhatItLeftOut(t *testing.T) {
	t.Parallel()
	l := web.NewLogLimiter(10 * time.Second)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		at    time.Duration
		key   string
		ok    bool
		count int64
	}{
		{0, "a", true, 0},
		{time.Second, "a", false, 0},
		{2 * time.Second, "a", false, 0},
		{3 * time.Second, "b", true, 0},
		{11 * time.Second, "a", true, 2},
		{12 * time.Second, "a", false, 0},
		{30 * time.Second, "a", true, 1},
	}
	for _, st := range steps {
		n, ok := l.Admit(st.key, t0.Add(st.at))
		if ok != st.ok || n != st.count {
			t.Fatalf("at %s key %s: admit = %d, %v; want %d, %v", st.at, st.key, n, ok, st.count, st.ok)
		}
	}
}
