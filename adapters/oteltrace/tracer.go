package oteltrace

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cachegate/cachegate/ports"
)

// InstrumentationName names cachegate's own tracer (the use-case spans).
const InstrumentationName = "github.com/cachegate/cachegate/application"

// Tracer implements ports.Tracer with OpenTelemetry spans.
type Tracer struct{ t trace.Tracer }

// NewTracer returns the use cases' tracer from tp.
func NewTracer(tp trace.TracerProvider) Tracer {
	return Tracer{t: tp.Tracer(InstrumentationName)}
}

// Start starts an internal span named name, a child of ctx's span.
func (t Tracer) Start(ctx context.Context, name string) (context.Context, ports.Span) {
	ctx, s := t.t.Start(ctx, name)
	return ctx, span{s}
}

type span struct{ s trace.Span }

// End records err (its text and an error status) and ends the span.
func (s span) End(err error) {
	if err != nil {
		s.s.RecordError(err)
		s.s.SetStatus(codes.Error, err.Error())
	}
	s.s.End()
}
