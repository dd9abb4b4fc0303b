package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// consoleSetupProject is test/console with the set-up page's program.
var consoleSetupProject = &npmProject{name: "console", files: []string{"package.json", "package-lock.json", "setup.mjs"}}

// Issue 34: the first admin without reading the docs, in a real browser.
// serve starts on an empty database and logs the one-time set-up link;
// test/console/setup.mjs opens it in Debian's Chromium, checks the page
// with axe-core and the keyboard, creates the admin, lands on the
// sign-in page and signs in, then sees the link refuse a second use.
// Without node, npm or chromium it skips loudly, and fails under CI=true.
func TestTheSetUpLinkInARealBrowser(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	browser := chromiumPath(t)
	dir := t.TempDir()
	app := consoleSetupProject.install(t, npm)
	artifacts := consoleArtifacts(t)
	s := startServer(t, serverConfig{Dir: dir, Env: []string{fastHashing}})
	s.waitLog(t, "one-time set-up link", "/console/setup#token=")
	m := setupLinkRE.FindStringSubmatch(s.log.String())
	if m == nil {
		t.Fatal("the set-up line holds no link of the expected form")
	}
	link := m[1] + "#token=" + m[3]
	const admin, password = "first-admin", "first-admin-password-1"

	ctx, cancel := context.WithTimeout(context.Background(), consoleSessionBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "setup.mjs")
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "CACHEGATE_SETUP_LINK="+link, "CACHEGATE_ADMIN_USERNAME="+admin,
		"CACHEGATE_ADMIN_PASSWORD="+password, "CACHEGATE_ARTIFACTS="+artifacts, "CHROMIUM="+browser)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the set-up session did not finish within %s:\n%s", consoleSessionBound, out.String())
	}
	if err != nil {
		t.Fatalf("the set-up session failed (%v); its steps (screenshots in %s):\n%s", err, artifacts, out.String())
	}
	if !strings.Contains(out.String(), "set-up session complete") {
		t.Fatalf("the set-up session ended without completing:\n%s", out.String())
	}
	t.Logf("the set-up session's steps (screenshots in %s):\n%s", artifacts, out.String())
	if shots, _ := filepath.Glob(filepath.Join(artifacts, "setup*.png")); len(shots) < 2 {
		t.Errorf("%d set-up screenshots in %s, want one at each width", len(shots), artifacts)
	}
	if n := len(s.logLines(1, "msg=request", "route=/auth/setup", "status=201")); n != 1 {
		t.Errorf("%d set-up requests answered 201, want 1", n)
	}
	if n := len(s.log.lines(m[3])); n != 1 {
		t.Errorf("the token is on %d log lines, want only the set-up line", n)
	}
	if strings.Contains(out.String(), password) || strings.Contains(s.log.String(), password) {
		t.Error("a password appears in the output or the server's log")
	}
	for _, line := range s.log.lines("level=ERROR") {
		t.Errorf("the server logged: %s", line)
	}
}
