package oteltrace_test

import (
	"context"
	"testing"

	"github.com/cachegate/cachegate/adapters/oteltrace"
)

func TestEnabled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		on   bool
		err  bool
	}{
		{"nothing set: off", nil, false, false},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, false},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, false},
		{"exporter none wins", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false, false},
		{"sdk disabled wins", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, false, false},
		{"sdk disabled false", map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{"other exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
	}
	for _, c := range cases {
		getenv := func(k string) string { return c.env[k] }
		on, err := oteltrace.Enabled(getenv)
		if on != c.on || (err != nil) != c.err {
			t.Errorf("%s: Enabled = %v, %v; want %v, error %v", c.name, on, err, c.on, c.err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	tp, err := oteltrace.FromEnv(context.Background(), func(string) string { return "" })
	if err != nil || tp != nil {
		t.Fatalf("off by default: got %v, %v", tp, err)
	}
	env := map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}
	tp, err = oteltrace.FromEnv(context.Background(), func(k string) string { return env[k] })
	if err != nil || tp == nil {
		t.Fatalf("on: got %v, %v", tp, err)
	}
	// Shutting down flushes nothing (no spans) and must not hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5e9)
	defer cancel()
	_ = tp.Shutdown(ctx)
}
