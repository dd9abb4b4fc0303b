package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bounds of installing a Node project's npm packages (from npm's cache
// after the first time; npmProject) and of the Rockets session, which
// waits for three access-token expiries of 1 s plus the 5 s leeway.
const (
	npmBound     = 5 * time.Minute
	sessionBound = 2 * time.Minute
)

// Issue 10: the real Rockets frontend libraries, @concepta/react-data-provider
// and @concepta/react-auth-provider, installed from npm as published,
// drive a whole session against the binary through their own functions
// (test/rockets/session.js): login, create, list (bare; as Rockets' table
// pages it with sort=id,ASC; with axios's filter[]= and sort[]=; filter
// with or and old operator names; s=<json> with nested $or and $contL and
// fields=; a search naming another user), get, patch, put without
// expiresIn, delete, access-token expiry with the library's own refresh at
// POST /token/refresh, two overlapping refreshes with one token, logout.
// It runs on SQLite and PostgreSQL. Without node and npm it skips loudly,
// and fails under CI=true (test/run installs them).
func TestRocketsFrontendLibrariesDriveAWholeSession(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	app := rocketsProject.install(t, npm)
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			dbURL, _, _ := db.open(t, dir)
			const username, password = "rocky", "rockets-password-1"
			if r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", username,
				"--password-stdin", "--database", dbURL); r.Code != 0 {
				t.Fatalf("users add: exit %d: %s", r.Code, r.Stderr)
			}
			s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", dbURL, "--access-token-ttl", "1s"}})

			ctx, cancel := context.WithTimeout(context.Background(), sessionBound)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "session.js")
			cmd.Dir = app
			cmd.Env = append(os.Environ(), "CACHEGATE_URL="+s.URL,
				"CACHEGATE_USERNAME="+username, "CACHEGATE_PASSWORD="+password)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("the session did not finish within %s:\n%s", sessionBound, out.String())
			}
			if err != nil {
				t.Fatalf("the session failed (%v); its steps:\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "session complete") {
				t.Fatalf("the session ended without completing:\n%s", out.String())
			}
			t.Logf("the session's steps:\n%s", out.String())

			// The library refreshed at the route it hard-codes: once per
			// expiry, twice in the overlap; none of them was refused before
			// the logout, whose two refused refreshes close the session.
			if n := len(s.logLines(4, "msg=request", "route=/token/refresh", "status=201")); n < 4 {
				t.Errorf("the server answered %d refreshes at /token/refresh with 201, want at least 4", n)
			}
			if n := len(s.logLines(2, "msg=request", "route=/token/refresh", "status=401")); n != 2 {
				t.Errorf("the server refused %d refreshes at /token/refresh, want the 2 after logout", n)
			}
			for _, line := range s.log.lines("level=ERROR") {
				t.Errorf("the server logged: %s", line)
			}
		})
	}
}

// nodeTools returns the paths of node and npm. Without them the test
// skips, except under CI=true, where it fails: test/run installs them.
func nodeTools(t *testing.T) (node, npm string) {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		msg := "node and npm are needed to run the Rockets frontend libraries (Debian: apt-get install nodejs npm; test/run does it as root)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED LOUDLY: " + msg)
	}
	return node, npm
}

// npmProject is one of the Node projects under test/ that the end-to-end
// tests run: its files are copied (without node_modules) to a directory
// beside the binary, which TestMain removes at the end, and `npm ci` runs
// there once per test process. The source tree is left as it is.
type npmProject struct {
	name  string   // its folder under test/
	files []string // what the programs need of it

	once sync.Once
	dir  string
	err  string
}

var (
	rocketsProject = &npmProject{name: "rockets",
		files: []string{"package.json", "package-lock.json", "session.js", "sse_common.js", "feed.js", "feed_restart.js", "jwt.mjs"}}
	consoleProject = &npmProject{name: "console", files: []string{"package.json", "package-lock.json", "console.mjs"}}
)

// install returns the project's installed copy, installing it on the
// first call.
func (p *npmProject) install(t *testing.T, npm string) string {
	t.Helper()
	p.once.Do(func() {
		dir, err := os.MkdirTemp(filepath.Dir(binary), p.name+"-")
		if err != nil {
			p.err = err.Error()
			return
		}
		for _, name := range p.files {
			b, err := os.ReadFile(filepath.Join("..", p.name, name))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
			}
			if err != nil {
				p.err = err.Error()
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), npmBound)
		defer cancel()
		// --ignore-scripts: no package here needs an install script, and
		// playwright-core's would fetch a browser (the console test drives
		// the system's Chromium).
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			p.err = "npm ci in test/" + p.name + ": " + err.Error() + "\n" + npmNoise.ReplaceAllString(out.String(), "")
			return
		}
		p.dir = dir
	})
	if p.err != "" {
		t.Fatal(p.err)
	}
	return p.dir
}

// npmNoise drops npm's advertising lines from a failure report.
var npmNoise = regexp.MustCompile(`(?m)^npm notice.*\n`)
