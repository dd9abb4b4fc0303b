package e2e

import (
	"database/sql"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	// The pure-Go SQLite driver registers itself as "sqlite".
	_ "modernc.org/sqlite"
)

var uuidLine = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n$`)

func TestVersionPrintsTheVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		r := runCLI(t, t.TempDir(), "", nil, arg)
		if r.Code != 0 || !regexp.MustCompile(`^cachegate \S+\n$`).MatchString(r.Stdout) || r.Stderr != "" {
			t.Errorf("cachegate %s: status %d, stdout %q, stderr %q; want 0 and one line \"cachegate VERSION\"",
				arg, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// The administrative commands on the zero-configuration database,
// cachegate.db in the working directory. Passwords go in on standard input
// and must never come out.
func TestUsersAreAdministeredFromTheCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const (
		password    = "first-Secret-9431"
		newPassword = "second-Secret-2718"
	)
	cli := func(t *testing.T, stdin string, args ...string) cliResult {
		t.Helper()
		r := runCLI(t, dir, stdin, nil, args...)
		for _, pw := range []string{password, newPassword} {
			if strings.Contains(r.Stdout+r.Stderr, pw) {
				t.Errorf("cachegate %s printed the password", strings.Join(args, " "))
			}
		}
		return r
	}
	// fails checks a failed command: non-zero, nothing on stdout, one
	// line on stderr that contains want.
	fails := func(t *testing.T, r cliResult, want string) {
		t.Helper()
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if r.Code == 0 || r.Stdout != "" || len(lines) != 1 || !strings.Contains(strings.ToLower(lines[0]), want) {
			t.Errorf("status %d, stdout %q, stderr %q; want non-zero and one line saying %q", r.Code, r.Stdout, r.Stderr, want)
		}
	}
	// column returns column i of the user's line in `users list`.
	column := func(t *testing.T, name string, i int) string {
		t.Helper()
		r := cli(t, "", "users", "list")
		if r.Code != 0 {
			t.Fatalf("users list: status %d, stderr %q", r.Code, r.Stderr)
		}
		lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
		if h := strings.Fields(lines[0]); !slices.Equal(h, []string{"ID", "USERNAME", "ACTIVE", "ADMIN", "CREATED"}) {
			t.Errorf("users list header %q", lines[0])
		}
		for _, l := range lines[1:] {
			if f := strings.Fields(l); len(f) == 5 && f[1] == name {
				return f[i]
			}
		}
		t.Fatalf("users list does not show %s:\n%s", name, r.Stdout)
		return ""
	}
	// listed returns the ACTIVE column of the user in `users list`.
	listed := func(t *testing.T, name string) string { return column(t, name, 2) }
	hash := func(t *testing.T, name string) string {
		t.Helper()
		db, err := sql.Open("sqlite", filepath.Join(dir, "cachegate.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var h string
		if err := db.QueryRow("SELECT password_hash FROM users WHERE username = ?", name).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}

	add := cli(t, password+"\n", "users", "add", "--username", "Alice", "--password-stdin")
	if add.Code != 0 || !uuidLine.MatchString(add.Stdout) {
		t.Fatalf("users add: status %d, stdout %q, stderr %q; want 0 and the new id", add.Code, add.Stdout, add.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "cachegate.db")); err != nil {
		t.Errorf("users add without configuration did not use cachegate.db in the working directory: %v", err)
	}

	t.Run("a username taken in another case is refused", func(t *testing.T) {
		fails(t, cli(t, password+"\n", "users", "add", "--username", "aLICE", "--password-stdin"), "already exists")
	})
	t.Run("an empty password is refused", func(t *testing.T) {
		fails(t, cli(t, "", "users", "add", "--username", "nopass", "--password-stdin"), "password")
	})
	t.Run("list shows the user, active", func(t *testing.T) {
		if got := listed(t, "Alice"); got != "true" {
			t.Errorf("ACTIVE %s, want true", got)
		}
	})
	t.Run("--inactive creates a disabled user", func(t *testing.T) {
		if r := cli(t, password+"\n", "users", "add", "--username", "bob", "--password-stdin", "--inactive"); r.Code != 0 {
			t.Fatalf("status %d, stderr %q", r.Code, r.Stderr)
		}
		if got := listed(t, "bob"); got != "false" {
			t.Errorf("ACTIVE %s, want false", got)
		}
	})
	t.Run("disable and enable switch the user, whatever the case of its name", func(t *testing.T) {
		for _, step := range []struct{ cmd, want string }{{"disable", "false"}, {"enable", "true"}} {
			if r := cli(t, "", "users", step.cmd, "ALICE"); r.Code != 0 {
				t.Fatalf("users %s: status %d, stderr %q", step.cmd, r.Code, r.Stderr)
			}
			if got := listed(t, "Alice"); got != step.want {
				t.Errorf("after users %s: ACTIVE %s, want %s", step.cmd, got, step.want)
			}
		}
	})
	t.Run("--admin, admin grant and admin revoke set the ADMIN column", func(t *testing.T) {
		if r := cli(t, password+"\n", "users", "add", "--username", "root", "--password-stdin", "--admin"); r.Code != 0 {
			t.Fatalf("status %d, stderr %q", r.Code, r.Stderr)
		}
		if got := column(t, "root", 3); got != "true" {
			t.Errorf("ADMIN of an admin %s", got)
		}
		for _, step := range []struct{ cmd, want string }{{"grant", "true"}, {"revoke", "false"}} {
			if r := cli(t, "", "users", "admin", step.cmd, "alice"); r.Code != 0 {
				t.Fatalf("users admin %s: status %d, stderr %q", step.cmd, r.Code, r.Stderr)
			}
			if got := column(t, "Alice", 3); got != step.want {
				t.Errorf("after users admin %s: ADMIN %s, want %s", step.cmd, got, step.want)
			}
		}
		fails(t, cli(t, "", "users", "admin", "grant", "nobody"), "")
	})
	t.Run("an unknown user cannot be disabled", func(t *testing.T) {
		fails(t, cli(t, "", "users", "disable", "nobody"), "")
	})
	// The README's "Commands" and the usage text write the flag after
	// NAME; the other order is Go's usual one. Both must work.
	for _, order := range []struct {
		name string
		args []string
		pw   string
	}{
		{"as the README writes it, NAME first", []string{"users", "set-password", "Alice", "--password-stdin"}, newPassword},
		{"with the flag first", []string{"users", "set-password", "--password-stdin", "Alice"}, password},
	} {
		t.Run("set-password replaces the stored hash, "+order.name, func(t *testing.T) {
			before := hash(t, "Alice")
			if r := cli(t, order.pw+"\n", order.args...); r.Code != 0 {
				t.Fatalf("status %d, stderr %q", r.Code, r.Stderr)
			}
			after := hash(t, "Alice")
			if after == before || strings.Contains(after, newPassword) || strings.Contains(after, password) {
				t.Errorf("set-password did not store a new hash of the password")
			}
		})
	}
}

func TestKeysRotateMakesANewSigningKeyEachTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kid := regexp.MustCompile(`new signing key (\S+) is published; servers sign with it from \S+Z,`)
	var seen []string
	for range 2 {
		r := runCLI(t, dir, "", nil, "keys", "rotate")
		m := kid.FindStringSubmatch(r.Stdout)
		if r.Code != 0 || m == nil {
			t.Fatalf("keys rotate: status %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		seen = append(seen, m[1])
	}
	if seen[0] == seen[1] {
		t.Errorf("two rotations made the same key id %s", seen[0])
	}
}

// A configuration error stops every command before it does anything: a
// non-zero status and exactly one line naming the setting, and serve never
// listens.
func TestConfigurationErrorsStopStartUpWithOneLineNamingTheSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		env     []string
		yaml    string
		setting string
	}{
		{name: "a bare number as a duration flag", args: []string{"--access-token-ttl", "10"}, setting: "access-token-ttl"},
		{name: "a bad duration in the environment", env: []string{"CACHEGATE_REFRESH_TOKEN_TTL=soon"},
			setting: "CACHEGATE_REFRESH_TOKEN_TTL"},
		{name: "an assignment naming an unknown entityKey",
			yaml:    "cache:\n  entities:\n    userCache: {}\n  settings:\n    assignments:\n      user: {entityKey: nope, policy: public}\n",
			setting: "cache.settings.assignments.user.entityKey"},
		{name: "a bad duration in the YAML file", yaml: "sweep:\n  interval: soon\n", setting: "sweep.interval"},
		{name: "an unreadable --config path", args: []string{"--config", "/nonexistent/cachegate.yaml"}, setting: "config"},
		{name: "a bcrypt cost out of range", env: []string{"CACHEGATE_BCRYPT_COST=3"}, setting: "CACHEGATE_BCRYPT_COST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)
			if tc.yaml != "" {
				path := filepath.Join(dir, "cachegate.yaml")
				if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", path)
			}
			r := runCLI(t, dir, "", tc.env, args...)
			lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
			if r.Code == 0 || len(lines) != 1 || !strings.Contains(lines[0], tc.setting) {
				t.Errorf("status %d, stderr %q; want non-zero and one line naming %s", r.Code, r.Stderr, tc.setting)
			}
			if strings.Contains(r.Stdout+r.Stderr, "listening") {
				t.Errorf("serve started listening despite the configuration error")
			}
			if _, err := os.Stat(filepath.Join(dir, "cachegate.db")); err == nil {
				t.Errorf("serve created its database despite the configuration error")
			}
		})
	}
}

// `cachegate serve` with no flag, no environment and no file: SQLite
// cachegate.db in the working directory, 127.0.0.1:8080, the one owner
// assignment user, guarded.
func TestServeStartsWithZeroConfiguration(t *testing.T) {
	t.Parallel()
	if ln, err := net.Listen("tcp", "127.0.0.1:8080"); err != nil {
		t.Skipf("SKIPPED: 127.0.0.1:8080, the default address, is in use here: %v", err)
	} else {
		ln.Close()
	}
	s := startServer(t, serverConfig{Bare: true})
	if s.URL != "http://127.0.0.1:8080" {
		t.Errorf("listening on %s, want the default 127.0.0.1:8080", s.URL)
	}
	client := newClient()
	mustSend(t, client, http.MethodGet, s.URL+"/healthz", nil).want(t, http.StatusOK)
	if _, err := os.Stat(filepath.Join(s.Dir, "cachegate.db")); err != nil {
		t.Errorf("no cachegate.db in the working directory: %v", err)
	}
	r := mustSend(t, client, http.MethodGet, s.URL+"/cache/user/"+newUUID(), nil).want(t, http.StatusUnauthorized)
	if got := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Errorf("WWW-Authenticate %q, want Bearer", got)
	}
}
