package application

import (
	"context"

	"github.com/cachegate/cachegate/ports"
)

// traced runs body(uc, ctx, in) inside a span named name: the one tracing
// wrapper of the cache use cases, which each Execute (Stream for lists)
// calls with its unexported body (ARCHITECTURE.md, "Tracing").
//
// body is a method expression such as (*GetCache).execute, not the method
// value uc.execute, which would escape once Execute is inlined elsewhere and
// cost an allocation per call even with tracing off.
func traced[UC, In, Out any](ctx context.Context, t ports.Tracer, name string, uc UC, in In,
	body func(UC, context.Context, In) (Out, error)) (Out, error) {
	ctx, span := t.Start(ctx, name)
	out, err := body(uc, ctx, in)
	span.End(err)
	return out, err
}
