package bootstrap

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/bootstrap/internal/logbuf"
	"github.com/cachegate/cachegate/bootstrap/storefx"
)

// Main runs the cachegate command line args (without the program name)
// and returns the process exit status (cli.ExitOK, …). version is the one
// set at build time, or ""; getenv reads the environment (os.Getenv).
func Main(version string, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	info, _ := debug.ReadBuildInfo()
	version = cli.Version(version, info)
	host := cliHost{getenv: getenv, logOut: stderr, version: version}
	return cli.New(host, version, stdin, stdout, stderr).Run(context.Background(), args)
}

// serve's log holds at most logBuffer bytes for at most logFlushEvery: one
// write per batch of lines, not per line.
const (
	logBuffer     = 64 << 10
	logFlushEvery = 100 * time.Millisecond
)

// cliHost gives the CLI adapter the configuration flags and a runtime per
// loaded configuration.
type cliHost struct {
	getenv  func(string) string
	logOut  io.Writer
	version string
}

// ConfigFlags defines the flags of the settings a command uses on fs.
func (h cliHost) ConfigFlags(fs *flag.FlagSet, uses cli.Uses) func() (cli.Runtime, error) {
	f := config.RegisterGroups(fs, uses)
	return func() (cli.Runtime, error) {
		cfg, err := config.Load(fs, f, h.getenv)
		if err != nil {
			return nil, err
		}
		return &cliRuntime{cfg: cfg, host: h, uses: uses}, nil
	}
}

// cliRuntime runs the service or its core for one configuration.
type cliRuntime struct {
	cfg  config.Config
	host cliHost
	// uses are the command's groups of settings: without cli.UsesKeys
	// the signing keys are never loaded (README.md, "Commands").
	uses cli.Uses
	app  *fx.App
	db   *bunstore.DB // opened by StartStorage
}

func (r *cliRuntime) JSONLogs() bool { return r.cfg.Log.Format == config.LogJSON }

func (r *cliRuntime) Addr() string { return r.cfg.Addr }

// Serve runs the whole service until ctx is done or the app stops.
// Its log is buffered (logBuffer, logFlushEvery; docs/operations.md,
// "Logs"): flushed once started, by every warning, and when Serve returns.
func (r *cliRuntime) Serve(ctx context.Context) error {
	out := logbuf.New(r.host.logOut, logBuffer, logFlushEvery)
	defer out.Close()
	log := NewLogger(r.cfg.Log, out)
	log.Info("starting", "version", r.host.version, "config", r.cfg)
	var (
		admins *application.Users
		link   *application.FirstAdmin
		addr   httpfx.Addr
	)
	app, err := Start(App(r.cfg, out, fx.Populate(&admins, &link, &addr)))
	if err != nil {
		return err
	}
	hintFirstAdmin(ctx, log, admins, link, addr.Get, r.cfg.Console)
	_ = out.Flush()
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
	var s cli.Services
	populate := []any{&s.Users, &s.Audit}
	// Asking fx for the keys' use case loads the signing keys (and may
	// need their secret); only commands using cli.UsesKeys do.
	if r.uses&cli.UsesKeys != 0 {
		populate = append(populate, &s.Keys)
	}
	app, err := Start(Core(cfg, r.host.logOut), fx.Populate(populate...))
	if err != nil {
		return cli.Services{}, err
	}
	r.app = app
	return s, nil
}

// StartStorage opens and migrates the database alone.
func (r *cliRuntime) StartStorage(ctx context.Context) (cli.Storage, error) {
	if r.app != nil || r.db != nil {
		return cli.Storage{}, errors.New("the core is already started")
	}
	opts := storefx.Options{Database: r.cfg.Database, Timeout: r.cfg.DatabaseTimeout,
		Tables: CacheOptions(r.cfg).Tables(), Migrate: true}
	db, err := storefx.Open(ctx, opts)
	if err != nil {
		return cli.Storage{}, err
	}
	r.db = db
	entities := make(map[string]string, len(r.cfg.Cache.Entities))
	for key, e := range r.cfg.Cache.Entities {
		entities[key] = e.Table
	}
	archive := bunstore.NewArchive(db)
	return cli.Storage{
		Archive: &application.Archive{Reader: archive, Writer: archive, Clock: system.Clock{}, Entities: entities, MaxDataBytes: int(r.cfg.Limits.DataBytes)},
		Backup:  func(ctx context.Context, path string) error { return bunstore.Backup(ctx, db, path) },
	}, nil
}

// Stop stops the core, or closes the database StartStorage opened.
func (r *cliRuntime) Stop(ctx context.Context) error {
	if db := r.db; db != nil {
		r.db = nil
		return db.Close()
	}
	if app := r.app; app != nil {
		r.app = nil
		return dig.RootCause(app.Stop(ctx))
	}
	return nil
}
