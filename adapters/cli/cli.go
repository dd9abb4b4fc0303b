package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cachegate/cachegate/application"
)

// Exit statuses of Run.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Command is one command of the table (commands.go).
type Command struct {
	// Name is the command's words after "cachegate": "serve", "users add".
	Name string
	// Synopsis is what follows the name in the usage line, as the README
	// writes it: "--username NAME --password-stdin [--inactive]", "NAME".
	Synopsis string
	// Summary says in a few words what the command does.
	Summary string
	// Args is the number of operands (NAME …) the command takes exactly.
	Args int
	// NoConfig marks a command without the configuration flags (version).
	NoConfig bool
	// Uses are the groups of configuration settings the command reads, so
	// its --help lists only their flags. Zero means every group.
	Uses Uses
	// Setup defines the command's own flags on fs and returns the function
	// that runs it once the flags are parsed. Setup may be nil when the
	// command has no flag of its own; then Run is used.
	Setup func(fs *flag.FlagSet) RunFunc
	// Run runs a command without flags of its own.
	Run RunFunc
}

// Uses is a set of groups of configuration settings (README.md,
// "Commands").
type Uses uint

// The groups of configuration settings.
const (
	// UsesStorage: --config, the database and its timeout, the logs.
	UsesStorage Uses = 1 << iota
	// UsesPasswords: password hashing (algorithm, cost).
	UsesPasswords
	// UsesKeys: the signing keys and the tokens they sign (issuer,
	// audience, lifetimes, HS256 secret, key-encryption secret).
	UsesKeys
	// UsesServer: everything else the HTTP service reads.
	UsesServer
	// UsesData: the bound on an entry's data (--data-bytes).
	UsesData

	// UsesAll is every group.
	UsesAll = UsesStorage | UsesPasswords | UsesKeys | UsesServer | UsesData
)

// RunFunc runs a command. An error that wraps ErrUsage exits with status 2,
// any other with status 1.
type RunFunc func(ctx context.Context, env *Env) error

// ErrUsage marks an error as the command line's fault (exit status 2).
var ErrUsage = errors.New("usage")

func usageErrorf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, a...)...)
}

// Services are the use cases the administrative commands call. Bootstrap
// fills them in from the running core.
type Services struct {
	Users *application.Users
	// Keys is nil for a command whose Uses lack UsesKeys.
	Keys  *application.Keys
	Audit *application.AuditTrail
}

// Storage is what export, import and backup use: the database alone,
// without the auth module, which would make a signing key in an empty one.
type Storage struct {
	Archive *application.Archive
	// Backup writes a consistent copy of a running SQLite database to a
	// new file at path; other databases refuse.
	Backup func(ctx context.Context, path string) error
}

// Host is the composition root as the CLI sees it.
type Host interface {
	// ConfigFlags defines the flags of the configuration settings of the
	// groups uses on fs. After fs.Parse, the function it returns loads the
	// configuration and returns its Runtime, or an error listing every
	// problem (one per line). Without UsesKeys, the Runtime never touches
	// the signing keys (nor needs their secret): its Services have no Keys.
	ConfigFlags(fs *flag.FlagSet, uses Uses) func() (Runtime, error)
}

// Runtime runs the service for one loaded configuration.
type Runtime interface {
	// Serve runs the HTTP service until ctx is done or the service stops
	// by itself, then shuts it down gracefully.
	Serve(ctx context.Context) error
	// Start starts the core (storage migrated, use cases ready, no HTTP
	// server) with its log quiet, and returns its use cases.
	Start(ctx context.Context) (Services, error)
	// StartStorage opens (and migrates) the database alone, with its log
	// quiet, and returns what export, import and backup need.
	StartStorage(ctx context.Context) (Storage, error)
	// Stop stops what Start or StartStorage started.
	Stop(ctx context.Context) error
	// JSONLogs reports whether the configuration asks for JSON logs; fatal
	// errors are then printed as one JSON object.
	JSONLogs() bool
	// Addr is the configured HTTP listen address (host:port), which the
	// health command asks.
	Addr() string
}

// Env is what a running command sees.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Args are the command's operands, flags removed.
	Args []string
	// Runtime is nil for a NoConfig command.
	Runtime Runtime
	// Version is the version main was built with (may be empty).
	Version string

	started  bool
	services Services
	storage  Storage
}

// Storage opens the database on first use and returns it; Run closes it
// when the command returns. A command uses Storage or Services, not both.
func (e *Env) Storage(ctx context.Context) (Storage, error) {
	if !e.started {
		s, err := e.Runtime.StartStorage(ctx)
		if err != nil {
			return Storage{}, err
		}
		e.started, e.storage = true, s
	}
	return e.storage, nil
}

// withServices is the RunFunc that starts the core (Env.Services) and then
// runs run with its use cases.
func withServices(run func(ctx context.Context, env *Env, s Services) error) RunFunc {
	return func(ctx context.Context, env *Env) error {
		s, err := env.Services(ctx)
		if err != nil {
			return err
		}
		return run(ctx, env, s)
	}
}

// Services starts the core on first use and returns its use cases; Run
// stops it when the command returns.
func (e *Env) Services(ctx context.Context) (Services, error) {
	if !e.started {
		s, err := e.Runtime.Start(ctx)
		if err != nil {
			return Services{}, err
		}
		e.started, e.services = true, s
	}
	return e.services, nil
}

// CLI runs command lines against a Host.
type CLI struct {
	Host     Host
	Commands []Command
	Version  string
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
}

// New returns the CLI with the table of commands (commands.go).
func New(host Host, version string, stdin io.Reader, stdout, stderr io.Writer) *CLI {
	return &CLI{Host: host, Commands: Commands(), Version: version, Stdin: stdin, Stdout: stdout, Stderr: stderr}
}

// Run runs one command line (without the program name) and returns the
// exit status.
func (c *CLI) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.Stderr, c.usage(""))
		return ExitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help":
		fmt.Fprint(c.Stdout, c.usage(""))
		return ExitOK
	case "help":
		return c.help(args[1:])
	case "--version", "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	switch cmd, rest, group := c.find(args); {
	case cmd != nil:
		return c.run(ctx, cmd, rest)
	case group == "":
		fmt.Fprintf(c.Stderr, "cachegate: unknown command %q\n\n%s", args[0], c.usage(""))
	case len(rest) == 0:
		fmt.Fprintf(c.Stderr, "cachegate: %s needs a command\n\n%s", group, c.usage(group))
	case isHelp(rest[0]):
		fmt.Fprint(c.Stdout, c.usage(group))
		return ExitOK
	default:
		fmt.Fprintf(c.Stderr, "cachegate: unknown command \"%s %s\"\n\n%s", group, rest[0], c.usage(group))
	}
	return ExitUsage
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// find returns the command the arguments name and the arguments after its
// name, or else the longest group of subcommands they begin with ("users",
// "users admin") and the arguments after it.
func (c *CLI) find(args []string) (*Command, []string, string) {
	for i := range c.Commands {
		words := strings.Fields(c.Commands[i].Name)
		if len(args) >= len(words) && slices.Equal(words, args[:len(words)]) {
			return &c.Commands[i], args[len(words):], ""
		}
	}
	var group []string
	for _, cmd := range c.Commands {
		words := strings.Fields(cmd.Name)
		n := 0
		for n < len(words)-1 && n < len(args) && words[n] == args[n] {
			n++
		}
		if n > len(group) {
			group = words[:n]
		}
	}
	if len(group) == 0 {
		return nil, nil, ""
	}
	return nil, args[len(group):], strings.Join(group, " ")
}

// help answers `cachegate help [command…]`.
func (c *CLI) help(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.Stdout, c.usage(""))
		return ExitOK
	}
	if cmd, rest, group := c.find(args); cmd != nil && len(rest) == 0 {
		fmt.Fprint(c.Stdout, c.commandUsage(cmd, c.flagSet(cmd)))
		return ExitOK
	} else if group != "" && len(rest) == 0 {
		fmt.Fprint(c.Stdout, c.usage(group))
		return ExitOK
	}
	fmt.Fprintf(c.Stderr, "cachegate: unknown command %q\n\n%s", strings.Join(args, " "), c.usage(""))
	return ExitUsage
}

// parsed is a command's flag set once built.
type parsed struct {
	fs     *flag.FlagSet
	load   func() (Runtime, error)
	run    RunFunc
	config map[string]bool // names of the configuration flags
}

func (c *CLI) flagSet(cmd *Command) parsed {
	fs := flag.NewFlagSet("cachegate "+cmd.Name, flag.ContinueOnError)
	// Run prints the problem and the usage itself, with --double-dash
	// flags, and on stdout for --help.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	p := parsed{fs: fs, run: cmd.Run, config: map[string]bool{}}
	if !cmd.NoConfig {
		uses := cmd.Uses
		if uses == 0 {
			uses = UsesAll
		}
		p.load = c.Host.ConfigFlags(fs, uses)
		fs.VisitAll(func(f *flag.Flag) { p.config[f.Name] = true })
	}
	if cmd.Setup != nil {
		p.run = cmd.Setup(fs)
	}
	return p
}

func (c *CLI) run(ctx context.Context, cmd *Command, args []string) int {
	p := c.flagSet(cmd)
	// Flags may come before or after operands ("users disable NAME
	// --database X"), as the README's "Commands" writes them.
	var operands []string
	for {
		if err := p.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(c.Stdout, c.commandUsage(cmd, p))
				return ExitOK
			}
			msg := strings.Replace(err.Error(), ": -", ": --", 1)
			fmt.Fprintf(c.Stderr, "cachegate: %s: %s\nusage: cachegate %s (see cachegate %s --help)\n",
				cmd.Name, msg, c.line(cmd), cmd.Name)
			return ExitUsage
		}
		if p.fs.NArg() == 0 {
			break
		}
		operands = append(operands, p.fs.Arg(0))
		args = p.fs.Args()[1:]
	}
	if len(operands) != cmd.Args {
		if cmd.Args == 0 {
			fmt.Fprintf(c.Stderr, "cachegate: %s takes no operand, got %q\n", cmd.Name, operands[0])
		} else {
			fmt.Fprintf(c.Stderr, "cachegate: %s takes %d operand(s), got %d: usage: cachegate %s\n",
				cmd.Name, cmd.Args, len(operands), c.line(cmd))
		}
		return ExitUsage
	}
	env := &Env{Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, Args: operands, Version: c.Version}
	if p.load != nil {
		rt, err := p.load()
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(c.Stderr, "cachegate: configuration: %s\n", line)
			}
			return ExitUsage
		}
		env.Runtime = rt
	}
	err := p.run(ctx, env)
	if env.started {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		if stopErr := env.Runtime.Stop(stopCtx); err == nil {
			err = stopErr
		}
		cancel()
	}
	if err == nil {
		return ExitOK
	}
	json := env.Runtime != nil && env.Runtime.JSONLogs()
	if errors.Is(err, ErrUsage) {
		printError(c.Stderr, json, strings.TrimPrefix(err.Error(), ErrUsage.Error()+": "))
		return ExitUsage
	}
	printError(c.Stderr, json, err.Error())
	return ExitFailure
}
