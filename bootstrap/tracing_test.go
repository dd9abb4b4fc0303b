package bootstrap_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/bootstrap/tracefx"
	"github.com/cachegate/cachegate/domain"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const tracedAssignee = "0190a000-0000-7000-8000-0000000000a1"

// startTraced starts the whole app on a SQLite file with a public "user"
// assignment, the guard off, and extra options; it returns the HTTP
// address, the Go cache API and the log.
func startTraced(t *testing.T, extra ...fx.Option) (string, *application.Cache, *syncBuffer) {
	t.Helper()
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.Database = "sqlite:" + t.TempDir() + "/traced.db"
	cfg.Auth.BcryptCost = 4
	cfg.Auth.EnableGuards = false
	a := cfg.Cache.Settings.Assignments[config.DefaultAssignment]
	a.Policy = domain.PolicyPublic
	cfg.Cache.Settings.Assignments[config.DefaultAssignment] = a
	var (
		addr  httpfx.Addr
		cache *application.Cache
	)
	logs := &syncBuffer{}
	app, err := bootstrap.Start(bootstrap.App(cfg, logs, append(extra, fx.Populate(&addr, &cache))...))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })
	return addr.Get(), cache, logs
}

func getOK(t *testing.T, url string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
}

// One GET over a real socket produces the tree HTTP server span → GetCache
// use-case span → SQL statement span(s), in one trace, and the request's
// log line names that trace.
func TestTracingSpanTreeForOneRequest(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	addr, cache, logs := startTraced(t,
		fx.Decorate(func(tracefx.Tracing) tracefx.Tracing { return tracefx.Tracing{Provider: tp} }))

	e, err := cache.Create(context.Background(), config.DefaultAssignment, application.CacheInput{
		Key: "theme", Type: "settings", AssigneeID: tracedAssignee, Data: []byte(`"dark"`)})
	if err != nil {
		t.Fatal(err)
	}
	exp.Reset()
	getOK(t, "http://"+addr+"/cache/"+config.DefaultAssignment+"/"+e.ID)

	spans := exp.GetSpans()
	var server, useCase *tracetest.SpanStub
	for i := range spans {
		s := &spans[i]
		switch {
		case s.SpanKind == trace.SpanKindServer:
			server = s
		case s.Name == "GetCache":
			useCase = s
		}
	}
	if server == nil || useCase == nil {
		t.Fatalf("want a server span and a GetCache span, got %v", names(spans))
	}
	if server.Name != "GET /cache/:assignment/:id" && !strings.Contains(server.Name, "/cache/") {
		t.Errorf("server span name %q does not name the route", server.Name)
	}
	if server.Parent.IsValid() {
		t.Errorf("server span has a parent %v; want a root span", server.Parent.SpanID())
	}
	if useCase.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("GetCache's parent = %v, want the server span %v", useCase.Parent.SpanID(), server.SpanContext.SpanID())
	}
	ids := map[trace.SpanID]string{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = s.Name
	}
	var sql []string
	for _, s := range spans {
		if s.SpanContext.TraceID() != server.SpanContext.TraceID() {
			t.Errorf("span %q is outside the request's trace (background statements must not be traced)", s.Name)
		}
		if s.Parent.IsValid() && ids[s.Parent.SpanID()] == "" {
			t.Errorf("span %q has a parent that is not in the tree", s.Name)
		}
		if s.Parent.SpanID() == useCase.SpanContext.SpanID() {
			if s.SpanKind != trace.SpanKindClient || !hasAttr(s, "db.system") || !hasAttr(s, "db.statement") {
				t.Errorf("child of GetCache %q is not an SQL span (kind %v, attrs %v)", s.Name, s.SpanKind, s.Attributes)
			}
			sql = append(sql, s.Name)
		}
	}
	if len(sql) == 0 {
		t.Fatalf("no SQL span under GetCache; spans: %v", names(spans))
	}
	want := "trace_id=" + server.SpanContext.TraceID().String()
	if !strings.Contains(logs.String(), want) {
		t.Errorf("request log lacks %s:\n%s", want, logs.String())
	}
	t.Logf("spans: %v", names(spans))
}

// With no OTEL_* variables tracing is off: no provider, no middleware, no
// trace_id in the request log.
func TestTracingOffByDefault(t *testing.T) {
	for _, v := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(v, "")
	}
	var tr tracefx.Tracing
	addr, cache, logs := startTraced(t, fx.Populate(&tr))
	if tr.Provider != nil {
		t.Fatalf("tracing is on by default: %T", tr.Provider)
	}
	e, err := cache.Create(context.Background(), config.DefaultAssignment, application.CacheInput{
		Key: "theme", Type: "settings", AssigneeID: tracedAssignee, Data: []byte(`"dark"`)})
	if err != nil {
		t.Fatal(err)
	}
	getOK(t, "http://"+addr+"/cache/"+config.DefaultAssignment+"/"+e.ID)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "msg=request") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "msg=request") {
		t.Fatalf("no request log line:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "trace_id") {
		t.Errorf("trace_id logged with tracing off:\n%s", logs.String())
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func hasAttr(s tracetest.SpanStub, key string) bool {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return true
		}
	}
	return false
}
