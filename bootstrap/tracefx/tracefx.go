// Package tracefx is the fx module of OpenTelemetry tracing
// (ARCHITECTURE.md, "Tracing"): it builds the tracer provider from the
// OTEL_* environment and shuts it down, flushing, when the app stops.
//
// Provides: Tracing, whose Provider is nil when tracing is off; storefx,
// cachefx and httpfx then add no spans.
package tracefx

import (
	"context"
	"os"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/oteltrace"
)

// Tracing is the app's tracer provider; a nil Provider traces nothing.
// A test or an embedder replaces it with fx.Decorate.
type Tracing struct {
	Provider trace.TracerProvider
}

// Module provides Tracing from the process's environment.
func Module() fx.Option {
	return fx.Module("trace", fx.Provide(func(lc fx.Lifecycle) (Tracing, error) {
		return New(lc, os.Getenv)
	}))
}

// New builds Tracing from getenv: the plain constructor behind Module.
func New(lc fx.Lifecycle, getenv func(string) string) (Tracing, error) {
	tp, err := oteltrace.FromEnv(context.Background(), getenv)
	if err != nil || tp == nil {
		return Tracing{}, err
	}
	lc.Append(fx.StopHook(tp.Shutdown))
	return Tracing{Provider: tp}, nil
}
