package bootstrap

import (
	"context"
	"time"

	"go.uber.org/dig"
	"go.uber.org/fx"
)

// startTimeout bounds opening the database, migrating and listening.
const startTimeout = 90 * time.Second

// Start builds and starts an fx app from opts. Its error, if any, is the
// root cause alone (dig.RootCause, nil for nil): one line naming what
// failed, not fx's call chain.
func Start(opts ...fx.Option) (*fx.App, error) {
	app := fx.New(append(opts, fx.StartTimeout(startTimeout))...)
	if err := app.Err(); err != nil {
		return nil, dig.RootCause(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		return nil, dig.RootCause(err)
	}
	return app, nil
}

// Stop stops app within timeout.
func Stop(app *fx.App, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return dig.RootCause(app.Stop(ctx))
}
