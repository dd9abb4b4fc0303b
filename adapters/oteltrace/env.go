package oteltrace

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// Enabled reports whether the environment (getenv, e.g. os.Getenv) turns
// tracing on, by the rule of docs/operations.md, "Tracing (OpenTelemetry)":
// off by default; an exporter name other than otlp or none is an error.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: only \"otlp\" and \"none\" are supported", exp)
	}
}

// FromEnv returns the SDK tracer provider the environment asks for, or
// nil when tracing is off (see Enabled): an OTLP/HTTP exporter behind a
// batching span processor, each configured by the standard OTEL_*
// variables, with service.name "cachegate" unless set (docs/operations.md,
// "Tracing (OpenTelemetry)"). The caller shuts the provider down
// (flushing buffered spans).
func FromEnv(ctx context.Context, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	on, err := Enabled(getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(
		resource.NewSchemaless(semconv.ServiceName("cachegate")),
		resource.Default(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		res = resource.Default()
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
