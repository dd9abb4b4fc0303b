// Package fxrun runs the background loops of the fx modules for an app's
// lifetime.
package fxrun

import (
	"context"

	"go.uber.org/fx"
)

// Go runs loop in its own goroutine from the app's start to its stop:
// stopping cancels loop's context and returns once loop has returned.
func Go(lc fx.Lifecycle, loop func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				defer close(done)
				loop(ctx)
			}()
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			<-done
			return nil
		},
	})
}
