package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

var serveCommand = Command{
	Name:    "serve",
	Summary: "run the HTTP service",
	Uses:    UsesAll,
	Run: func(ctx context.Context, env *Env) error {
		return env.Runtime.Serve(untilSignal(ctx))
	},
}

// untilSignal returns a context cancelled by SIGINT or SIGTERM, whose cause
// is a SignalError naming the signal.
func untilSignal(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer signal.Stop(sig)
		select {
		case s := <-sig:
			cancel(SignalError{s})
		case <-ctx.Done():
		}
	}()
	return ctx
}

// SignalError is the cause of serve's context when a signal stops it.
type SignalError struct{ Signal os.Signal }

func (e SignalError) Error() string { return "received " + e.Signal.String() }
