package bootstrap

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap/config"
)

// Main runs the cachegate command line args (without the program name)
// and returns the process exit status: 0 success, 1 failure, 2 bad usage or
// configuration. version is the version set at build time, or "" to take
// it from the build information. getenv reads the environment (os.Getenv).
func Main(version string, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	info, _ := debug.ReadBuildInfo()
	version = cli.Version(version, info)
	host := cliHost{getenv: getenv, logOut: stderr, version: version}
	return cli.New(host, version, stdin, stdout, stderr).Run(context.Background(), args)
}

// cliHost gives the CLI adapter the configuration flags and a runtime per
// loaded configuration.
type cliHost struct {
	getenv  func(string) string
	logOut  io.Writer
	version string
}

// ConfigFlags defines the configuration flags on fs.
func (h cliHost) ConfigFlags(fs *flag.FlagSet) func() (cli.Runtime, error) {
	f := config.Register(fs)
	return func() (cli.Runtime, error) {
		cfg, err := config.Load(fs, f, h.getenv)
		if err != nil {
			return nil, err
		}
		return &cliRuntime{cfg: cfg, host: h}, nil
	}
}

// cliRuntime runs the service or its core for one configuration.
type cliRuntime struct {
	cfg  config.Config
	host cliHost
	app  *fx.App
}

// cliServices are the use cases the administrative commands call.
type cliServices struct {
	fx.In
	Users *application.UserAdmin
	Keys  *application.KeyAdmin
	Audit *application.AuditTrail
}

// JSONLogs reports whether the logs are JSON.
func (r *cliRuntime) JSONLogs() bool { return r.cfg.Log.Format == config.LogJSON }

// Serve runs the whole service until ctx is done or the app stops.
func (r *cliRuntime) Serve(ctx context.Context) error {
	log := NewLogger(r.cfg.Log, r.host.logOut)
	log.Info("starting", "version", r.host.version, "config", r.cfg)
	app, err := Start(App(r.cfg, r.host.logOut))
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		var sig cli.SignalError
		if errors.As(context.Cause(ctx), &sig) {
			log.Info("shutting down", "signal", sig.Signal.String())
		} else {
			log.Info("shutting down")
		}
	case <-app.Done():
		log.Info("shutting down")
	}
	if err := Stop(app, r.cfg.ShutdownTimeout+5*time.Second); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// Start starts the core with its log limited to errors: the output of an
// administrative command is the command's own.
func (r *cliRuntime) Start(context.Context) (cli.Services, error) {
	if r.app != nil {
		return cli.Services{}, errors.New("the core is already started")
	}
	cfg := r.cfg
	cfg.Log.Level = slog.LevelError
	var s cliServices
	app, err := Start(Core(cfg, r.host.logOut), fx.Populate(&s))
	if err != nil {
		return cli.Services{}, err
	}
	r.app = app
	return cli.Services{Users: s.Users, Keys: s.Keys, Audit: s.Audit}, nil
}

// Stop stops the core.
func (r *cliRuntime) Stop(ctx context.Context) error {
	if r.app == nil {
		return nil
	}
	app := r.app
	r.app = nil
	return rootCause(app.Stop(ctx))
}
