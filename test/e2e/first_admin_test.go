package e2e

import (
	"strings"
	"testing"
)

// A newcomer who starts serve on a fresh database is told how the first
// admin is made; once one exists, serve says nothing of it.
func TestServeSaysHowToCreateTheFirstAdmin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const hint = "no admin exists"
	s := startServer(t, serverConfig{Dir: dir})
	s.waitLog(t, hint, "cachegate users add --username NAME --admin --password-stdin", "/console/")
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited with status %d", code)
	}

	if r := runCLI(t, dir, "a password of 27 bytes long\n", nil, "users", "add", "--username", "root", "--admin", "--password-stdin"); r.Code != 0 {
		t.Fatalf("users add --admin: status %d, stderr %q", r.Code, r.Stderr)
	}
	s = startServer(t, serverConfig{Dir: dir})
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited with status %d", code)
	}
	if strings.Contains(s.log.String(), hint) {
		t.Errorf("serve says %q although root is an admin:\n%s", hint, s.log.String())
	}
}
