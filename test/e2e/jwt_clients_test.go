package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// jwtClientsBound bounds test/rockets/jwt.mjs: two rotations, 3 s of
// publishing ahead, the logins around them.
const jwtClientsBound = 2 * time.Minute

// testPublishAhead is the --key-publish-ahead of the test's rotation:
// more than the key set's 1 s cache (jwt.mjs), as the default 2 min is
// more than the JWKS's max-age of 60 s.
const testPublishAhead = "3s"

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
		serverReadsKey(t, client, s.URL, m[1])
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

// serverReadsKey makes the running server read its keys now, as a token
// from a replica that knows kid does: a token naming a kid the server
// does not know makes it reload (at most once a second). In production
// its 30 s reload is enough, the key being published 2 min ahead; the test
// publishes 3 s ahead. The token's signature is garbage: it is refused.
func serverReadsKey(t *testing.T, c *http.Client, base, kid string) {
	t.Helper()
	enc := base64.RawURLEncoding
	tok := enc.EncodeToString([]byte(`{"alg":"EdDSA","kid":"`+kid+`","typ":"at+jwt"}`)) + "." +
		enc.EncodeToString([]byte(`{}`)) + "." + enc.EncodeToString(make([]byte, 64))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(jwksKids(t, c, base), `"`+kid+`"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not read key %s within 10 s", kid)
		}
		mustSend(t, c, http.MethodGet, base+"/cache/user", nil, "Authorization", "Bearer "+tok)
		time.Sleep(200 * time.Millisecond)
	}
}
