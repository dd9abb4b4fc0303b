package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
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

// setupLinkRE finds the one-time set-up link in serve's log and its
// token (32 random bytes, base64url without padding).
var setupLinkRE = regexp.MustCompile(`link="?(http://([^/\s"]+)/console/setup)#token=([A-Za-z0-9_-]{43})(?:["\s]|$)`)

// A newcomer who starts serve on a fresh database gets a one-time link
// to the console's set-up page; the link makes the first admin, who can
// then sign in, and works once. The token is on that line only, and a
// server that has an admin logs no link.
func TestServeLogsAOneTimeSetUpLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, serverConfig{Dir: dir})
	s.waitLog(t, "one-time set-up link", "/console/setup#token=")
	m := setupLinkRE.FindStringSubmatch(s.log.String())
	if m == nil {
		t.Fatal("the set-up line holds no link of the expected form")
	}
	page, host, token := m[1], m[2], m[3]
	if "http://"+host != s.URL {
		t.Errorf("the link is on %s, the server on %s", host, s.URL)
	}
	c := newClient()
	r := mustSend(t, c, http.MethodGet, page, nil).want(t, http.StatusOK)
	if !strings.Contains(string(r.Body), "setup.js") {
		t.Errorf("the link's page is not the set-up page: %s", short(r.Body))
	}
	setup := func(username string) []byte {
		b, _ := json.Marshal(map[string]string{"token": token, "username": username, "password": "a password of 27 bytes long"})
		return b
	}
	r = mustSend(t, c, http.MethodPost, s.URL+"/auth/setup", setup("root")).want(t, http.StatusCreated)
	var u struct {
		Username string
		Admin    bool
	}
	if err := json.Unmarshal(r.Body, &u); err != nil || u.Username != "root" || !u.Admin {
		t.Errorf("set-up answered %s (%v), want the admin root", short(r.Body), err)
	}
	if r := mustSend(t, c, http.MethodPost, s.URL+"/auth/setup", setup("root2")).want(t, http.StatusForbidden); r.errorCode() != "SETUP_LINK_USED" {
		t.Errorf("the link used again: %s, want SETUP_LINK_USED", r.errorCode())
	}
	login, _ := json.Marshal(map[string]string{"username": "root", "password": "a password of 27 bytes long"})
	r = mustSend(t, c, http.MethodPost, s.URL+"/auth/login", login).want(t, http.StatusCreated)
	var pair struct{ AccessToken string }
	if err := json.Unmarshal(r.Body, &pair); err != nil || pair.AccessToken == "" {
		t.Fatalf("login of the new admin: %s", short(r.Body))
	}
	mustSend(t, c, http.MethodGet, s.URL+"/admin/users", nil, "Authorization", "Bearer "+pair.AccessToken).want(t, http.StatusOK)
	s.waitLog(t, "audit event", "type=user.admin_granted", "detail=setup-link")
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited with status %d", code)
	}
	if lines := s.log.lines(token); len(lines) != 1 {
		t.Errorf("the token is on %d log lines, want only the set-up line", len(lines))
	}

	s = startServer(t, serverConfig{Dir: dir})
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited with status %d", code)
	}
	if strings.Contains(s.log.String(), "set-up link") {
		t.Error("serve logs a set-up link although root is an admin")
	}
}
