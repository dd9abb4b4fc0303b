// Package feedfx is the fx module of the change feed, the process's one
// reader of the change log (background.Feed), run for the app's lifetime.
//
// Requires: ports.ChangeLog (storefx provides it), ports.Clock,
// *slog.Logger; ports.FeedMetrics when present. Provides:
// *background.Feed, which cachefx serves as Watch and the HTTP module as
// GET /cache/<a>/events.
package feedfx

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/bootstrap/internal/fxrun"
	"github.com/cachegate/cachegate/ports"
)

// Options configure the feed.
type Options struct {
	// Retention is how long changes are kept for resuming subscribers
	// (default 1h).
	Retention time.Duration
	// Poll bounds how long a change of another replica takes to be read
	// (default 250ms).
	Poll time.Duration
}

// Deps are what the feed needs from the graph.
type Deps struct {
	fx.In
	Log     ports.ChangeLog
	Clock   ports.Clock
	Logger  *slog.Logger
	Metrics ports.FeedMetrics `optional:"true"`
}

// New builds the feed: the plain constructor behind Module.
func New(o Options, d Deps) (*background.Feed, error) {
	return background.NewFeed(background.FeedConfig{Log: d.Log, Clock: d.Clock, Retention: o.Retention,
		Poll: o.Poll, Metrics: d.Metrics, Logger: d.Logger})
}

// Module provides the feed and runs it from start to stop; stopping ends
// every subscription.
func Module(o Options) fx.Option {
	return fx.Module("feed",
		fx.Supply(fx.Private, o),
		fx.Provide(New),
		fx.Invoke(func(lc fx.Lifecycle, f *background.Feed) {
			fxrun.Go(lc, func(ctx context.Context) { _ = f.Run(ctx) })
		}),
	)
}
