package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// consoleSessionBound bounds the console's browser session (about twenty
// pages and their checks in one Chromium); installing playwright-core and
// axe-core is npmBound's.
const consoleSessionBound = 4 * time.Minute

// defaultChromium is where Debian's chromium package puts the browser;
// test/run installs it when missing. CHROMIUM names another.
const defaultChromium = "/usr/bin/chromium"

// Issues 27 and 34: the web console, in a real browser.
// test/console/console.mjs drives Debian's Chromium with playwright-core
// against the binary on SQLite, with an administrator made by `cachegate
// users add --admin`, in a browser zone far from UTC: sign in (tokens
// where the Rockets provider keeps them, no cookie), create a user (the
// success message clears at the next action), times in the browser's
// zone with UTC on hover, the filter builder and its raw syntax (a
// refused filter leaves no stale page count), grant and revoke admin
// (the revoke confirmed), log the user in three times over HTTP, revoke
// one session on the user's page (Cancel keeps it) and one on the page of
// every user's sessions (usernames beside ids), see the revoked sessions'
// API calls refused, disable the user (confirmed), watch an audit event
// arrive live (user and actor by name and id), filter entries of another
// assignee with the builder (owners by name), open one entry whole, edit
// it with If-Match, meet a conflict with the current version shown,
// reload and delete it (confirmed, audited as entry.updated and
// entry.deleted), delete a user and revoke a key (confirmed), refresh once
// at /token/refresh after a refused access token, watch the change feed;
// on every view, the confirmation dialog included, axe-core's WCAG 2.1
// A/AA and best-practice rules at zero violations and a keyboard walk (Tab
// reaches every control in document order, the skip link first, focus
// visible); every page fits 375 px with every action on screen; no CSP
// violation; every admin answer no-store. Screenshots of each view (1280
// and 375 px wide) are kept in $CACHEGATE_TEST_ARTIFACTS/console, or in a
// temporary directory the test names in its log. Without node, npm or
// chromium it skips loudly, and fails under CI=true (test/run installs
// them).
func TestConsoleInARealBrowser(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	browser := chromiumPath(t)
	dir := t.TempDir()
	app := consoleProject.install(t, npm)
	artifacts := consoleArtifacts(t)

	dbURL := "sqlite:" + filepath.Join(dir, "console.db")
	const admin, password = "root-admin", "console-admin-password-1"
	if r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", admin, "--admin",
		"--password-stdin", "--database", dbURL); r.Code != 0 {
		t.Fatalf("users add --admin: exit %d: %s", r.Code, r.Stderr)
	}
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", dbURL}, Env: []string{fastHashing}})

	ctx, cancel := context.WithTimeout(context.Background(), consoleSessionBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "console.mjs")
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "CACHEGATE_URL="+s.URL, "CACHEGATE_ADMIN_USERNAME="+admin,
		"CACHEGATE_ADMIN_PASSWORD="+password, "CACHEGATE_ARTIFACTS="+artifacts, "CHROMIUM="+browser)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the console session did not finish within %s:\n%s", consoleSessionBound, out.String())
	}
	if err != nil {
		t.Fatalf("the console session failed (%v); its steps (screenshots in %s):\n%s", err, artifacts, out.String())
	}
	if !strings.Contains(out.String(), "console session complete") {
		t.Fatalf("the console session ended without completing:\n%s", out.String())
	}
	t.Logf("the console session's steps (screenshots in %s):\n%s", artifacts, out.String())
	shots, _ := filepath.Glob(filepath.Join(artifacts, "*.png"))
	if len(shots) < 20 {
		t.Errorf("%d screenshots in %s, want one per page at both widths", len(shots), artifacts)
	}

	// The console's own files were served from the binary, and none of
	// the admin answers the pages read was cached (no-store is the admin
	// API's; the access log shows they were all asked for).
	if n := len(s.logLines(5, "msg=request", "route=/console/*file", "status=200")); n < 5 {
		t.Errorf("the server served %d console files, want the page, its modules and its style sheet", n)
	}
	if n := len(s.logLines(1, "msg=request", "route=/token/refresh", "status=201")); n < 1 {
		t.Errorf("the console never refreshed at /token/refresh")
	}
	for _, line := range s.log.lines("level=ERROR") {
		t.Errorf("the server logged: %s", line)
	}
	if strings.Contains(out.String(), password) || strings.Contains(s.log.String(), password) {
		t.Errorf("a password appears in the output or the server's log")
	}
	// The live views pass their token in ?access_token= (EventSource sends
	// no header); the server takes it out before anything logs the query.
	if n := len(s.log.lines("access_token")); n > 0 {
		t.Errorf("%d log lines mention access_token", n)
	}
	if n := len(s.logLines(1, "msg=request", "route=/admin/audit/events")); n < 1 {
		t.Errorf("the audit page never opened the live audit stream")
	}
}

// chromiumPath returns the browser to drive: $CHROMIUM, else Debian's.
// Without one the test skips loudly, and fails under CI=true.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = defaultChromium
	}
	if _, err := os.Stat(p); err != nil {
		msg := "Chromium is needed to drive the web console (Debian: apt-get install chromium; test/run does it as root)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED LOUDLY: " + msg)
	}
	return p
}

// consoleArtifacts is where the screenshots go: a console directory under
// $CACHEGATE_TEST_ARTIFACTS, else a new temporary directory that is kept
// (for a person to look at) and named in the log.
func consoleArtifacts(t *testing.T) string {
	t.Helper()
	if root := os.Getenv("CACHEGATE_TEST_ARTIFACTS"); root != "" {
		dir := filepath.Join(root, "console")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir, err := os.MkdirTemp("", "cachegate-console-screenshots-")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
