package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/authfx"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/domain"
)

type cmdEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// signals is where serve waits for SIGINT/SIGTERM; tests replace it.
	signals chan os.Signal
}

// parse reads the configuration flags of a command plus its own, set up by
// extra, and returns the loaded configuration and the positional args.
func (e cmdEnv) parse(name string, args []string, extra func(*flag.FlagSet)) (config.Config, []string, bool) {
	fs := flag.NewFlagSet("cachegate "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	f := config.Register(fs)
	if extra != nil {
		extra(fs)
	}
	// Flags may come before or after positional arguments
	// ("users disable NAME --database X"), as CONTRACT.md writes them.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return config.Config{}, nil, false
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	cfg, err := config.Load(fs, f, e.getenv)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(e.stderr, "cachegate: configuration: %s\n", line)
		}
		return config.Config{}, nil, false
	}
	return cfg, positional, true
}

func (e cmdEnv) fail(err error) int {
	fmt.Fprintf(e.stderr, "cachegate: %v\n", err)
	return 1
}

func (e cmdEnv) serve(args []string) int {
	cfg, _, ok := e.parse("serve", args, nil)
	if !ok {
		return 2
	}
	log := bootstrap.NewLogger(cfg.Log, e.stderr)
	log.Info("starting", "version", version, "config", cfg)
	app, err := bootstrap.Start(bootstrap.App(cfg, e.stderr))
	if err != nil {
		return e.fail(err)
	}
	sig := e.signals
	if sig == nil {
		sig = make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sig)
	}
	select {
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
	case <-app.Done():
		log.Info("shutting down")
	}
	if err := bootstrap.Stop(app, cfg.ShutdownTimeout+5*time.Second); err != nil {
		return e.fail(err)
	}
	log.Info("stopped")
	return 0
}

func (e cmdEnv) migrate(args []string) int {
	cfg, _, ok := e.parse("migrate", args, nil)
	if !ok {
		return 2
	}
	// Opening the store migrates it.
	app, err := bootstrap.Start(bootstrap.Core(cfg, e.stderr))
	if err != nil {
		return e.fail(err)
	}
	if err := bootstrap.Stop(app, 30*time.Second); err != nil {
		return e.fail(err)
	}
	fmt.Fprintln(e.stdout, "migrations applied")
	return 0
}

// withAdmin starts the core, hands the user administration to do and
// stops.
func (e cmdEnv) withAdmin(cfg config.Config, do func(context.Context, *application.UserAdmin) error) int {
	var admin *application.UserAdmin
	cfg.Log.Level = slog.LevelError // administrative output is the command's own
	app, err := bootstrap.Start(bootstrap.Core(cfg, e.stderr), fx.Populate(&admin))
	if err != nil {
		return e.fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runErr := do(ctx, admin)
	if err := bootstrap.Stop(app, 30*time.Second); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return e.fail(runErr)
	}
	return 0
}

func (e cmdEnv) users(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return 2
	}
	sub, args := args[0], args[1:]
	var username string
	var passwordStdin, inactive bool
	flags := func(fs *flag.FlagSet) {
		if sub == "add" {
			fs.StringVar(&username, "username", "", "the new user's name")
			fs.BoolVar(&inactive, "inactive", false, "create the user disabled")
		}
		if sub == "add" || sub == "set-password" {
			fs.BoolVar(&passwordStdin, "password-stdin", false, "read the password from standard input")
		}
	}
	cfg, rest, ok := e.parse("users "+sub, args, flags)
	if !ok {
		return 2
	}
	name := func() (string, bool) {
		if len(rest) != 1 {
			fmt.Fprintf(e.stderr, "cachegate: users %s takes exactly one NAME\n", sub)
			return "", false
		}
		return rest[0], true
	}
	switch sub {
	case "add":
		if username == "" || !passwordStdin {
			fmt.Fprintln(e.stderr, "cachegate: users add needs --username NAME and --password-stdin")
			return 2
		}
		pw, err := readPassword(e.stdin)
		if err != nil {
			return e.fail(err)
		}
		return e.withAdmin(cfg, func(ctx context.Context, a *application.UserAdmin) error {
			u, err := a.Add(ctx, application.AddUserInput{Username: username, Password: pw, Active: !inactive})
			if err == nil {
				fmt.Fprintln(e.stdout, u.ID)
			}
			return err
		})
	case "list":
		return e.withAdmin(cfg, func(ctx context.Context, a *application.UserAdmin) error {
			users, err := a.List(ctx)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tUSERNAME\tACTIVE\tCREATED")
			for _, u := range users {
				fmt.Fprintf(w, "%s\t%s\t%t\t%s\n", u.ID, u.Username, u.Active, u.DateCreated.Format(time.RFC3339))
			}
			return w.Flush()
		})
	case "disable", "enable":
		n, ok := name()
		if !ok {
			return 2
		}
		return e.withAdmin(cfg, func(ctx context.Context, a *application.UserAdmin) error {
			_, err := a.SetActive(ctx, n, sub == "enable")
			if err == nil {
				fmt.Fprintf(e.stdout, "user %s %sd\n", n, sub)
			}
			return err
		})
	case "set-password":
		n, ok := name()
		if !ok {
			return 2
		}
		if !passwordStdin {
			fmt.Fprintln(e.stderr, "cachegate: users set-password needs --password-stdin")
			return 2
		}
		pw, err := readPassword(e.stdin)
		if err != nil {
			return e.fail(err)
		}
		return e.withAdmin(cfg, func(ctx context.Context, a *application.UserAdmin) error {
			_, err := a.SetPassword(ctx, n, pw)
			if err == nil {
				fmt.Fprintf(e.stdout, "password of %s changed\n", n)
			}
			return err
		})
	}
	fmt.Fprintf(e.stderr, "cachegate: unknown command \"users %s\"\n\n%s", sub, usage)
	return 2
}

// readPassword reads the first line of r, without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, domain.MaxPasswordBytes+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on standard input")
	}
	return line, nil
}

func (e cmdEnv) keys(args []string) int {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprint(e.stderr, usage)
		return 2
	}
	cfg, _, ok := e.parse("keys rotate", args[1:], nil)
	if !ok {
		return 2
	}
	var keys authfx.KeySet
	cfg.Log.Level = slog.LevelError
	app, err := bootstrap.Start(bootstrap.Core(cfg, e.stderr), fx.Populate(&keys))
	if err != nil {
		return e.fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kid, runErr := keys.Rotate(ctx)
	if err := bootstrap.Stop(app, 30*time.Second); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return e.fail(runErr)
	}
	fmt.Fprintf(e.stdout, "new signing key %s is current; tokens signed by the previous key verify until they expire\n", kid)
	return 0
}
