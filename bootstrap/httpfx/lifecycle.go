package httpfx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.uber.org/fx"
)

// Listen is one HTTP server's place in an app's lifecycle, which
// ServerHook turns into the hook: the main server's or the metrics one's.
type Listen struct {
	// Addr is the listen address; port 0 picks a free one.
	Addr string
	// Setting names Addr's configuration setting in a listen error
	// ("addr", "metrics-addr").
	Setting string
	// ShutdownTimeout bounds how long in-flight requests may finish; zero
	// leaves only the stop context's own deadline.
	ShutdownTimeout time.Duration
	// Log receives "listening addr=…" and an unexpected stop of Serve.
	Log *slog.Logger
	// Bound, if set, is told the bound address once listening.
	Bound func(addr string)
	// Drain, if set, waits after Shutdown (within the same timeout) for
	// what Shutdown does not: connections the handlers took over.
	Drain func(ctx context.Context) error
	// Wrap, if set, wraps the listener before Serve (the main server's
	// per-address connection cap, ginhttp.Server.Listener).
	Wrap func(net.Listener) net.Listener
}

// ServerHook returns the hook that serves srv for the app's lifetime:
// OnStart listens (an error names the setting) and serves; OnStop shuts srv
// down gracefully and returns once Serve has returned and Drain is done.
func ServerHook(srv *http.Server, l Listen) fx.Hook {
	done := make(chan struct{})
	return fx.Hook{
		OnStart: func(ctx context.Context) error {
			ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", l.Addr)
			if err != nil {
				return fmt.Errorf("%s: listen on %s: %w", l.Setting, l.Addr, err)
			}
			if l.Bound != nil {
				l.Bound(ln.Addr().String())
			}
			l.Log.Info("listening", "addr", ln.Addr().String())
			if l.Wrap != nil {
				ln = l.Wrap(ln)
			}
			go func() {
				defer close(done)
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					l.Log.Error("http server stopped", "err", err)
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			if l.ShutdownTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, l.ShutdownTimeout)
				defer cancel()
			}
			err := srv.Shutdown(ctx)
			<-done
			if l.Drain != nil {
				err = errors.Join(err, l.Drain(ctx))
			}
			if err != nil {
				return fmt.Errorf("%s: shutdown: %w", l.Setting, err)
			}
			return nil
		},
	}
}
