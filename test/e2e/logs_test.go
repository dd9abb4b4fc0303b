package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestLogsNeverHoldSecrets drives every path that handles a secret —
// user creation, good and bad logins, bearer tokens good and forged,
// refresh, logout, the query string — with JSON logs at debug level, then
// searches the whole server log for the password and every token.
func TestLogsNeverHoldSecrets(t *testing.T) {
	t.Parallel()
	const password = "Xy-very-distinctive-passw0rd"
	dir := t.TempDir()
	db := "sqlite:" + dir + "/logs.db"
	add := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", "logger", "--password-stdin", "--database", db)
	if add.Code != 0 {
		t.Fatalf("users add: exit %d: %s", add.Code, add.Stderr)
	}
	id := strings.TrimSpace(add.Stdout)
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", db, "--log-level", "debug", "--refresh-reuse-grace", "0"}})

	post := func(path, auth, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	var pair struct{ AccessToken, RefreshToken string }
	if code, b := post("/auth/login", "", `{"username":"logger","password":"`+password+`"}`); code != 201 || json.Unmarshal(b, &pair) != nil {
		t.Fatalf("login: %d", code)
	}
	post("/auth/login", "", `{"username":"logger","password":"`+password+`-wrong"}`)
	post("/cache/user", pair.AccessToken, `{"key":"k","type":"t","data":"d","assignee":{"id":"`+id+`"},"expiresIn":null}`)
	post("/cache/user", pair.AccessToken+"x", `{}`)
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/cache/user?token="+pair.AccessToken, nil)
	req.Header.Set("Authorization", "Bearer "+pair.AccessToken)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
	var next struct{ AccessToken, RefreshToken string }
	if code, b := post("/auth/refresh", "", `{"refreshToken":"`+pair.RefreshToken+`"}`); code != 201 || json.Unmarshal(b, &next) != nil {
		t.Fatalf("refresh: %d", code)
	}
	post("/auth/refresh", "", `{"refreshToken":"`+pair.RefreshToken+`"}`) // reuse: revokes, logged at Warn
	post("/auth/logout", next.AccessToken, ``)
	s.stop(t)

	log := s.log.String()
	if !strings.Contains(log, "msg=request") || !strings.Contains(log, "refresh token reuse detected") {
		t.Fatalf("the log does not show the requests and the reuse; the test would prove nothing:\n%.2000s", log)
	}
	for name, secret := range map[string]string{
		"the password":                password,
		"the access token":            pair.AccessToken,
		"the refresh token":           pair.RefreshToken,
		"the second access token":     next.AccessToken,
		"the second refresh token":    next.RefreshToken,
		"a token's signature segment": pair.AccessToken[strings.LastIndexByte(pair.AccessToken, '.')+1:],
	} {
		if strings.Contains(log, secret) {
			t.Errorf("the server log holds %s", name)
		}
	}
	if strings.Contains(strings.ToLower(log), "bearer ey") {
		t.Error("the server log holds an Authorization header")
	}
}

// TestLogLinesOfARequestCarryItsID checks that the lines the use cases log
// (not only the access line) carry the request's id: "login failed" and
// "login throttled" come from application.Login, far below the HTTP layer.
func TestLogLinesOfARequestCarryItsID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", "sqlite:" + dir + "/ids.db",
		"--throttle-username-limit", "1"}})
	c := newClient()
	for _, id := range []string{"rid-login-1", "rid-login-2"} {
		mustSend(t, c, http.MethodPost, s.URL+"/auth/login", []byte(`{"username":"ghost","password":"wrong password"}`),
			"X-Request-Id", id)
	}
	for _, want := range [][]string{
		{"msg=\"login failed\"", "request_id=rid-login-1"},
		{"msg=request", "request_id=rid-login-1"},
		{"msg=\"login throttled\"", "request_id=rid-login-2"},
	} {
		s.waitLog(t, want...)
		if len(s.log.lines(want...)) != 1 {
			t.Errorf("want one line with %q in:\n%s", want, s.log.String())
		}
	}
}
