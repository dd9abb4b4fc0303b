package ginhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/oteltrace"
)

// BenchmarkGetByIDTraced is BenchmarkGetByID with tracing on: a real SDK
// provider (always sampling, batching span processor) exporting to a
// no-op exporter, the otelgin middleware and the use-case span. Compare
// with BenchmarkGetByID (tracing off; docs/benchmarks.md).
func BenchmarkGetByIDTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	f := newTracedFixture(b, oteltrace.NewTracer(tp), func(o *ginhttp.Options) { o.TracerProvider = tp })
	h := f.server.Handler()
	req := httptest.NewRequest(http.MethodGet, "/cache/user/"+benchEntry(b, f, "user"), nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// With a provider, the request log line carries the trace id; a request
// with a W3C traceparent header continues the caller's trace.
func TestTracedRequestLogsTraceID(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	f := newTracedFixture(t, oteltrace.NewTracer(tp), func(o *ginhttp.Options) { o.TracerProvider = tp })
	req := httptest.NewRequest(http.MethodGet, "/cache/user/0190a000-0000-7000-8000-000000000999", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	w := httptest.NewRecorder()
	f.server.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusNotFound {
		t.Fatalf("status %d", w.Code)
	}
	if !strings.Contains(f.logs.String(), `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`) {
		t.Errorf("request log lacks the caller's trace id:\n%s", f.logs.String())
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("want the server and GetCache spans, got %d", len(spans))
	}
	for _, s := range spans {
		if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("span %q did not continue the caller's trace", s.Name)
		}
	}
}
