package cli_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/cli"
)

// fakeHost defines one configuration flag, --fail-config, and
// --server-flag for commands using cli.UsesServer, and counts what its
// runtime does.
type fakeHost struct {
	rt *fakeRuntime
}

func (h fakeHost) ConfigFlags(fs *flag.FlagSet, uses cli.Uses) func() (cli.Runtime, error) {
	bad := fs.Bool("fail-config", false, "make the configuration fail")
	if uses&cli.UsesServer != 0 {
		fs.Bool("server-flag", false, "a setting only the server reads")
	}
	return func() (cli.Runtime, error) {
		if *bad {
			return nil, errors.New("first: wrong\nsecond: wrong too")
		}
		return h.rt, nil
	}
}

type fakeRuntime struct {
	json            bool
	starts, stops   int
	startErr, stopE error
	services        cli.Services
	addr            string
}

func (r *fakeRuntime) Serve(context.Context) error { return nil }
func (r *fakeRuntime) Start(context.Context) (cli.Services, error) {
	r.starts++
	return r.services, r.startErr
}
func (r *fakeRuntime) StartStorage(context.Context) (cli.Storage, error) {
	r.starts++
	return cli.Storage{}, r.startErr
}
func (r *fakeRuntime) Stop(context.Context) error { r.stops++; return r.stopE }
func (r *fakeRuntime) JSONLogs() bool             { return r.json }
func (r *fakeRuntime) Addr() string               { return r.addr }

// run runs args against the fake host, with one extra command "probe"
// that calls do.
func run(t *testing.T, rt *fakeRuntime, do cli.RunFunc, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := cli.New(fakeHost{rt}, "v1.2.3", strings.NewReader(""), &stdout, &stderr)
	c.Commands = append(c.Commands, cli.Command{Name: "probe", Summary: "test", Run: do})
	code := c.Run(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

func TestRunMapsOutcomesToExitStatuses(t *testing.T) {
	t.Parallel()
	useCore := func(ctx context.Context, env *cli.Env) error { _, err := env.Services(ctx); return err }
	for _, tc := range []struct {
		name     string
		rt       fakeRuntime
		do       cli.RunFunc
		args     []string
		code     int
		stderr   string
		startsOK func(*fakeRuntime) bool
	}{
		{name: "success is 0", do: useCore, code: 0,
			startsOK: func(r *fakeRuntime) bool { return r.starts == 1 && r.stops == 1 }},
		{name: "a command that never asks for services starts nothing",
			do: func(context.Context, *cli.Env) error { return nil }, code: 0,
			startsOK: func(r *fakeRuntime) bool { return r.starts == 0 && r.stops == 0 }},
		{name: "a failure is 1 and one line", do: func(context.Context, *cli.Env) error { return errors.New("boom") },
			code: 1, stderr: "cachegate: boom\n"},
		{name: "a usage error is 2", do: func(context.Context, *cli.Env) error { return cli.ErrUsage },
			code: 2, stderr: "cachegate: usage\n"},
		{name: "a failing stop is a failure", rt: fakeRuntime{stopE: errors.New("stuck")}, do: useCore,
			code: 1, stderr: "cachegate: stuck\n"},
		{name: "a failing start is a failure and stops nothing", rt: fakeRuntime{startErr: errors.New("no db")}, do: useCore,
			code: 1, stderr: "cachegate: no db\n", startsOK: func(r *fakeRuntime) bool { return r.stops == 0 }},
		{name: "a configuration error is 2, one line per problem", args: []string{"--fail-config"},
			do: useCore, code: 2,
			stderr: "cachegate: configuration: first: wrong\ncachegate: configuration: second: wrong too\n"},
		{name: "with JSON logs a failure is one JSON object", rt: fakeRuntime{json: true},
			do: func(context.Context, *cli.Env) error { return errors.New(`say "boom"`) }, code: 1,
			stderr: `"level":"ERROR","msg":"cachegate failed","error":"say \"boom\""}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := tc.rt
			code, _, stderr := run(t, &rt, tc.do, append([]string{"probe"}, tc.args...)...)
			if code != tc.code || !strings.HasSuffix(stderr, tc.stderr) || (tc.stderr == "" && stderr != "") {
				t.Errorf("status %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.stderr)
			}
			if tc.startsOK != nil && !tc.startsOK(&rt) {
				t.Errorf("started %d and stopped %d times", rt.starts, rt.stops)
			}
		})
	}
}

// The table stays consistent as commands are added: unique names, a
// summary each, and every --flag a synopsis names defined by the command.
func TestEveryCommandOfTheTableIsWellFormed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, cmd := range cli.Commands() {
		if seen[cmd.Name] || cmd.Summary == "" || (cmd.Run == nil) == (cmd.Setup == nil) {
			t.Errorf("command %q: duplicate, without summary, or not exactly one of Run and Setup", cmd.Name)
		}
		seen[cmd.Name] = true
		code, stdout, _ := run(t, &fakeRuntime{}, nil, append(strings.Fields(cmd.Name), "--help")...)
		if code != 0 {
			t.Errorf("%s --help: status %d", cmd.Name, code)
		}
		for _, w := range strings.Fields(cmd.Synopsis) {
			if f := strings.Trim(w, "[]"); strings.HasPrefix(f, "--") && !strings.Contains(stdout, "\n  "+f+"\n") && !strings.Contains(stdout, "\n  "+f+" ") {
				t.Errorf("%s: the synopsis names %s, which --help does not list:\n%s", cmd.Name, f, stdout)
			}
		}
	}
}

func TestVersionFallsBackOnTheBuildInformation(t *testing.T) {
	t.Parallel()
	info := func(main string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Version: main}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const rev = "3f2a9c1b7d4e5566778899aabbccddeeff001122"
	for _, tc := range []struct {
		name string
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"a version set at build time wins", "v2.0.0", info("v1.0.0"), "v2.0.0"},
		{"no build information is devel", "", nil, "devel"},
		{"a tagged module version is printed as is", "", info("v1.4.0"), "v1.4.0"},
		{"a pseudo-version already carries the revision", "", info("v0.0.0-20261126050000-3f2a9c1b7d4e+dirty",
			"vcs.revision", rev, "vcs.modified", "true"), "v0.0.0-20261126050000-3f2a9c1b7d4e+dirty"},
		{"a devel build shows the revision", "dev", info("(devel)", "vcs.revision", rev, "vcs.modified", "false"),
			"devel+3f2a9c1b7d4e"},
		{"uncommitted changes are dirty", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"),
			"devel+3f2a9c1b7d4e.dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := cli.Version(tc.set, tc.info); got != tc.want {
				t.Errorf("Version = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestACommandsFlagsAreThoseOfTheSettingsItUses(t *testing.T) {
	t.Parallel()
	nop := func(context.Context, *cli.Env) error { return nil }
	for _, c := range []struct {
		name       string
		uses       cli.Uses
		wantServer bool
	}{
		{"a command using storage only", cli.UsesStorage, false},
		{"a command using the server settings", cli.UsesStorage | cli.UsesServer, true},
		{"a command declaring nothing uses everything", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			cl := cli.New(fakeHost{&fakeRuntime{}}, "v1", strings.NewReader(""), &stdout, &stderr)
			cl.Commands = append(cl.Commands, cli.Command{Name: "probe", Summary: "test", Uses: c.uses, Run: nop})
			if code := cl.Run(context.Background(), []string{"probe", "--help"}); code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if got := strings.Contains(stdout.String(), "--server-flag"); got != c.wantServer {
				t.Errorf("--help lists --server-flag: %v, want %v:\n%s", got, c.wantServer, stdout.String())
			}
			if !strings.Contains(stdout.String(), "--fail-config") {
				t.Errorf("--help lacks the storage flag:\n%s", stdout.String())
			}
			code := cl.Run(context.Background(), []string{"probe", "--server-flag"})
			if wantCode := map[bool]int{true: cli.ExitOK, false: cli.ExitUsage}[c.wantServer]; code != wantCode {
				t.Errorf("probe --server-flag: exit %d, want %d", code, wantCode)
			}
		})
	}
}

// `users admin` is a group like `users`: its --help lists its
// subcommands, and each subcommand reads the storage settings only, like
// the other `users` commands (no server flag, no signing keys).
func TestUsersAdminIsAGroupOfUsersCommands(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"users", "admin", "--help"}, {"help", "users", "admin"}} {
		code, stdout, stderr := run(t, &fakeRuntime{}, nil, args...)
		if code != cli.ExitOK || !strings.Contains(stdout, "usage: cachegate users admin <command>") ||
			!strings.Contains(stdout, "cachegate users admin grant NAME") || !strings.Contains(stdout, "cachegate users admin revoke NAME") ||
			strings.Contains(stdout, "users add") {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 0 and the two subcommands only", args, code, stdout, stderr)
		}
	}
	if code, _, stderr := run(t, &fakeRuntime{}, nil, "users", "admin"); code != cli.ExitUsage || !strings.Contains(stderr, "users admin needs a command") {
		t.Errorf("users admin: status %d, stderr %q", code, stderr)
	}
	if code, _, stderr := run(t, &fakeRuntime{}, nil, "users", "admin", "promote"); code != cli.ExitUsage || !strings.Contains(stderr, `unknown command "users admin promote"`) {
		t.Errorf("users admin promote: status %d, stderr %q", code, stderr)
	}
	for _, verb := range []string{"grant", "revoke"} {
		code, stdout, _ := run(t, &fakeRuntime{}, nil, "users", "admin", verb, "--help")
		if code != cli.ExitOK || strings.Contains(stdout, "--server-flag") || !strings.Contains(stdout, "--fail-config") {
			t.Errorf("users admin %s --help: status %d, want 0 and the storage flags only:\n%s", verb, code, stdout)
		}
		for _, cmd := range cli.Commands() {
			if cmd.Name == "users admin "+verb && cmd.Uses != cli.UsesStorage {
				t.Errorf("users admin %s uses %b, want the storage settings only (no signing keys)", verb, cmd.Uses)
			}
		}
	}
}

// --help shows each flag's default as flag.PrintDefaults does: every one
// but the zero value of the flag's type.
func TestHelpShowsEveryFlagsDefault(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	cl := cli.New(fakeHost{&fakeRuntime{}}, "v1", strings.NewReader(""), &stdout, &stderr)
	cl.Commands = append(cl.Commands, cli.Command{Name: "probe", Summary: "test", Setup: func(fs *flag.FlagSet) cli.RunFunc {
		fs.Int("limit", 1000, "at most `N`")
		fs.Int("none", 0, "zero")
		fs.String("out", "", "the `FILE`")
		fs.String("addr", "127.0.0.1:8080", "the `host:port`")
		fs.Bool("on", true, "on by default")
		fs.Bool("off", false, "off by default")
		return func(context.Context, *cli.Env) error { return nil }
	}})
	if code := cl.Run(context.Background(), []string{"probe", "--help"}); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"at most N (default 1000)\n", "zero\n", "the FILE\n", "the host:port (default 127.0.0.1:8080)\n",
		"on by default (default true)\n", "off by default\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout.String())
		}
	}
}
