package ports

import "context"

// Tracer starts a span around one unit of work (a use case). The
// application layer depends on this port only; adapters implement it over
// a tracing library (adapters/oteltrace over OpenTelemetry).
type Tracer interface {
	// Start returns ctx carrying the new span, so that work done with it
	// (SQL statements) nests under the span, and the span to end.
	Start(ctx context.Context, name string) (context.Context, Span)
}

// Span is one started unit of work.
type Span interface {
	// End ends the span; a non-nil err marks it failed.
	End(err error)
}

// NopTracer traces nothing and allocates nothing.
type NopTracer struct{}

// Start returns ctx and a span whose End does nothing.
func (NopTracer) Start(ctx context.Context, _ string) (context.Context, Span) { return ctx, nopSpan{} }

type nopSpan struct{}

func (nopSpan) End(error) {}
