package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// auditLine is one line of `cachegate audit --json`.
type auditLine struct {
	Time      time.Time `json:"time"`
	Type      string    `json:"type"`
	UserID    string    `json:"userId"`
	Username  string    `json:"username"`
	Address   string    `json:"address"`
	RequestID string    `json:"requestId"`
	Family    string    `json:"family"`
	Reason    string    `json:"reason"`
}

// TestAuditTrailOnTheBinary drives the events a server and the CLI record
// on one SQLite file and reads them back with `cachegate audit`.
func TestAuditTrailOnTheBinary(t *testing.T) {
	t.Parallel()
	const password = "Audit-distinctive-passw0rd"
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "audit.db")
	cli := func(stdin string, args ...string) cliResult {
		t.Helper()
		r := runCLI(t, dir, stdin, nil, append(args, "--database", db)...)
		if r.Code != 0 {
			t.Fatalf("cachegate %v: exit %d: %s", args, r.Code, r.Stderr)
		}
		return r
	}
	id := strings.TrimSpace(cli(password+"\n", "users", "add", "--username", "Auditee", "--password-stdin").Stdout)
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", db}})
	c := newClient()
	login := func(user, pw, rid string) reply {
		return mustSend(t, c, http.MethodPost, s.URL+"/auth/login", []byte(`{"username":"`+user+`","password":"`+pw+`"}`), "X-Request-Id", rid)
	}
	login("auditee", "wrong password", "rid-bad").want(t, http.StatusUnauthorized)
	login("ghost", "wrong password", "rid-ghost").want(t, http.StatusUnauthorized)
	ok := login("auditee", password, "rid-ok").want(t, http.StatusCreated)
	var pair struct{ AccessToken, RefreshToken string }
	if err := json.Unmarshal(ok.Body, &pair); err != nil {
		t.Fatal(err)
	}
	mustSend(t, c, http.MethodPost, s.URL+"/auth/logout", nil, "Authorization", "Bearer "+pair.AccessToken, "X-Request-Id", "rid-out").
		want(t, http.StatusNoContent)
	cli("", "users", "disable", "auditee")

	read := func(args ...string) []auditLine {
		t.Helper()
		out := cli("", append([]string{"audit", "--json"}, args...)...).Stdout
		var lines []auditLine
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			var e auditLine
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("not a JSON line: %s", l)
			}
			lines = append(lines, e)
		}
		if strings.Contains(out, password) || strings.Contains(out, pair.AccessToken) || strings.Contains(out, pair.RefreshToken) {
			t.Error("the audit output holds a password or a token")
		}
		return lines
	}
	types := func(ls []auditLine) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Type)
		}
		return out
	}

	all := read()
	want := []string{"user.disabled", "logout", "login.succeeded", "login.failed", "login.failed", "user.added"}
	if !slices.Equal(types(all), want) {
		t.Fatalf("events %v, want newest first %v", types(all), want)
	}
	byType := map[string]auditLine{}
	for _, e := range all {
		byType[e.Type+e.Reason] = e
	}
	for key, w := range map[string]auditLine{
		"login.failedbad_password": {Username: "auditee", Address: "127.0.0.1", RequestID: "rid-bad"},
		"login.failedunknown_user": {Username: "ghost", Address: "127.0.0.1", RequestID: "rid-ghost"},
		"login.succeeded":          {UserID: id, Username: "Auditee", Address: "127.0.0.1", RequestID: "rid-ok"},
		"logout":                   {UserID: id, Username: "Auditee", Address: "127.0.0.1", RequestID: "rid-out"},
		"user.added":               {UserID: id, Username: "Auditee"},
		"user.disabled":            {UserID: id, Username: "Auditee"},
	} {
		got, ok := byType[key]
		if !ok {
			t.Errorf("no %s event", key)
			continue
		}
		if got.Username != w.Username || got.Address != w.Address || got.RequestID != w.RequestID || (w.UserID != "" && got.UserID != w.UserID) {
			t.Errorf("%s: %+v, want %+v", key, got, w)
		}
		if time.Since(got.Time) > time.Minute {
			t.Errorf("%s: time %v", key, got.Time)
		}
	}
	if f := byType["login.succeeded"].Family; f == "" || byType["logout"].Family != f {
		t.Errorf("login family %q, logout family %q: want the same session", f, byType["logout"].Family)
	}
	if got := types(read("--type", "login.failed")); !slices.Equal(got, []string{"login.failed", "login.failed"}) {
		t.Errorf("--type login.failed: %v", got)
	}
	if got := types(read("--user", "AUDITEE ", "--type", "login.failed")); !slices.Equal(got, []string{"login.failed"}) {
		t.Errorf("--user AUDITEE --type login.failed: %v", got)
	}
	if got := read("--since", "1h"); len(got) != len(all) {
		t.Errorf("--since 1h: %d events, want %d", len(got), len(all))
	}
	if r := runCLI(t, dir, "", nil, "audit", "--type", "nonsense", "--database", db); r.Code == 0 {
		t.Errorf("an unknown --type was accepted")
	}
	table := cli("", "audit").Stdout
	if !strings.HasPrefix(table, "TIME") || !strings.Contains(table, "rid-ghost") {
		t.Errorf("the table output:\n%s", table)
	}
	s.waitLog(t, `msg="audit event"`, "type=login.failed", "reason=unknown_user", "request_id=rid-ghost")
}

// TestAuditRefreshReusedOnTheBinary shows the refresh.reused event of a
// replayed refresh token in auth_events, with the user and the family.
func TestAuditRefreshReusedOnTheBinary(t *testing.T) {
	t.Parallel()
	const password = "Reuse-distinctive-passw0rd"
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "reuse.db")
	cli := func(stdin string, args ...string) cliResult {
		t.Helper()
		r := runCLI(t, dir, stdin, nil, append(args, "--database", db)...)
		if r.Code != 0 {
			t.Fatalf("cachegate %v: exit %d: %s", args, r.Code, r.Stderr)
		}
		return r
	}
	id := strings.TrimSpace(cli(password+"\n", "users", "add", "--username", "Replayer", "--password-stdin").Stdout)
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", db, "--refresh-reuse-grace", "0"}})
	c := newClient()
	ok := mustSend(t, c, http.MethodPost, s.URL+"/auth/login", []byte(`{"username":"replayer","password":"`+password+`"}`)).
		want(t, http.StatusCreated)
	var pair struct{ RefreshToken string }
	if err := json.Unmarshal(ok.Body, &pair); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"refreshToken": pair.RefreshToken})
	mustSend(t, c, http.MethodPost, s.URL+"/auth/refresh", b).want(t, http.StatusCreated)
	mustSend(t, c, http.MethodPost, s.URL+"/auth/refresh", b, "X-Request-Id", "rid-replay").want(t, http.StatusUnauthorized)

	out := cli("", "audit", "--json", "--type", "refresh.reused").Stdout
	if strings.Contains(out, password) || strings.Contains(out, pair.RefreshToken) {
		t.Error("the audit output holds a password or a token")
	}
	var lines []auditLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e auditLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		lines = append(lines, e)
	}
	if len(lines) != 1 {
		t.Fatalf("refresh.reused events: %+v, want one", lines)
	}
	e := lines[0]
	if e.UserID != id || e.Username != "Replayer" || e.Family == "" || e.RequestID != "rid-replay" || e.Address != "127.0.0.1" {
		t.Errorf("refresh.reused event %+v, want user %s Replayer, a family, rid-replay, 127.0.0.1", e, id)
	}
	var login []auditLine
	for _, l := range strings.Split(strings.TrimSpace(cli("", "audit", "--json", "--type", "login.succeeded").Stdout), "\n") {
		var x auditLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		login = append(login, x)
	}
	if len(login) != 1 || login[0].Family != e.Family {
		t.Errorf("login events %+v: want one, of family %q", login, e.Family)
	}
}
