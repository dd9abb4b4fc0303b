package e2e

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// jwtClientsBound bounds test/rockets/jwt.mjs: two rotations, a minute
// of publishing ahead, the logins around them.
const jwtClientsBound = 3 * time.Minute

// testPublishAhead is the --key-publish-ahead of the test's rotation: the
// least the server accepts, the JWKS's max-age of 60 s (the default is
// twice that), and more than the key set's 1 s cache (jwt.mjs).
const testPublishAhead = "1m"

var rotatedAnyKid = regexp.MustCompile(`new signing key (\S+) is`)

// Issue 25: standard JWT libraries, exactly as published, accept
// cachegate's tokens (test/rockets/jwt.mjs says what each checks): jose's
// jwtVerify with typ at+jwt against the JWKS, oauth4webapi's RFC 9068
// validator; both refuse the refresh token (its audience). Across `keys
// rotate` (published ahead) one long-lived jose key set, whose cooldown
// is its default 30 s, verifies every token, of the old key and of the
// new; a set that fetched just before `keys rotate --now` refuses the
// new key's token (the control). On SQLite; without node and npm it
// skips loudly, and fails under CI=true.
func TestStandardJWTLibrariesVerifyTokensAcrossARotation(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	app := rocketsProject.install(t, npm)
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "jwt.db")
	const username, password = "jose", "jwt-clients-password-1"
	if r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", username,
		"--password-stdin", "--database", dbURL); r.Code != 0 {
		t.Fatalf("users add: exit %d: %s", r.Code, r.Stderr)
	}
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", dbURL}})
	client := newClient()

	ctx, cancel := context.WithTimeout(context.Background(), jwtClientsBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "jwt.mjs")
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "CACHEGATE_URL="+s.URL, "CACHEGATE_USERNAME="+username, "CACHEGATE_PASSWORD="+password)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var steps strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		var args []string
		switch line {
		case "ROTATE":
			args = []string{"keys", "rotate", "--key-publish-ahead", testPublishAhead, "--database", dbURL}
		case "ROTATE-NOW":
			args = []string{"keys", "rotate", "--now", "--database", dbURL}
		default:
			steps.WriteString(line + "\n")
			continue
		}
		r := runCLI(t, dir, "", nil, args...)
		m := rotatedAnyKid.FindStringSubmatch(r.Stdout)
		if r.Code != 0 || m == nil {
			t.Fatalf("%s: status %d, stdout %q, stderr %q", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		serverListsKey(t, client, s.URL, m[1])
		if _, err := stdin.Write([]byte(m[1] + "\n")); err != nil {
			t.Fatalf("tell jwt.mjs the new kid: %v", err)
		}
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("jwt.mjs did not finish within %s:\n%s%s", jwtClientsBound, steps.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("jwt.mjs failed (%v); its steps:\n%s%s", err, steps.String(), stderr.String())
	}
	t.Logf("jwt.mjs:\n%s", steps.String())
}

// serverListsKey waits until the running server's JWKS lists kid: within
// a second of the rotation (README.md, "Signing keys").
func serverListsKey(t *testing.T, c *http.Client, base, kid string) {
	t.Helper()
	deadline := time.Now().Add(publishReachBound)
	for !strings.Contains(jwksKids(t, c, base), `"`+kid+`"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the server does not list key %s %v after the rotation", kid, publishReachBound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
