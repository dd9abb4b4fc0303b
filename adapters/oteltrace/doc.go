// Package oteltrace plugs OpenTelemetry tracing into cachegate: Tracer
// implements ports.Tracer over an OpenTelemetry TracerProvider (the use
// cases' spans), and FromEnv builds the SDK provider with the OTLP/HTTP
// exporter from the standard OTEL_* environment variables, or nothing when
// tracing is off (the default).
package oteltrace
