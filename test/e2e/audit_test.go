package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cachegate/cachegate/test/contract"
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
	Count     int       `json:"count"`
	LastSeen  time.Time `json:"lastSeen"`
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
	login("GHOST", "wrong password", "rid-ghost-2").want(t, http.StatusUnauthorized)
	// A name of 308 characters holding terminal escapes (JSON \u001b).
	login(`\u001b[2J\u001b[31m`+strings.Repeat("e", 300), "wrong password", "rid-evil").want(t, http.StatusUnauthorized)
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
	want := []string{"user.disabled", "logout", "login.succeeded", "login.failed", "login.failed", "login.failed", "user.added"}
	if !slices.Equal(types(all), want) {
		t.Fatalf("events %v, want newest first %v", types(all), want)
	}
	byType := map[string]auditLine{}
	for _, e := range all {
		if e.RequestID != "rid-evil" {
			byType[e.Type+e.Reason] = e
		}
		if e.Count != 1 && e.RequestID != "rid-ghost" {
			t.Errorf("%s: count %d, want 1", e.Type, e.Count)
		}
		if e.RequestID == "rid-evil" && (e.Username != "\x1b[2J\x1b[31m"+strings.Repeat("e", 55) || e.Count != 1) {
			t.Errorf("the failure naming 308 characters stored %q (%d), want its first 64 characters", e.Username, len(e.Username))
		}
	}
	// The two failures of ghost are one event (README, "Audit trail").
	if g := byType["login.failedunknown_user"]; g.Count != 2 || !g.LastSeen.After(g.Time) {
		t.Errorf("ghost's failures: count %d, first %v, last %v; want 2, the last later", g.Count, g.Time, g.LastSeen)
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
	if got := types(read("--type", "login.failed")); !slices.Equal(got, []string{"login.failed", "login.failed", "login.failed"}) {
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
	if strings.ContainsRune(table, 0x1b) || !strings.Contains(table, `\x1b[2J\x1b[31meee`) {
		t.Errorf("the table prints the stored username's escapes raw, or not at all:\n%q", table)
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

// readAudit runs `cachegate audit --json` with args on b's database and
// returns its lines, failing t on a line that is not an object of exactly
// the contract's fields (docs/operations.md, "Audit trail") or on any of secrets in
// the output.
func (b *authBinary) readAudit(t *testing.T, secrets []string, args ...string) []auditLine {
	t.Helper()
	r := b.cli(t, "", append([]string{"audit", "--json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("cachegate audit: exit %d: %s", r.Code, r.Stderr)
	}
	for _, s := range secrets {
		if strings.Contains(r.Stdout+r.Stderr, s) {
			t.Fatal("the audit output holds a password or a token")
		}
	}
	fields := []string{"address", "count", "family", "lastSeen", "reason", "requestId", "time", "type", "userId", "username"}
	var lines []auditLine
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if l == "" {
			continue
		}
		var raw map[string]any
		var e auditLine
		if json.Unmarshal([]byte(l), &raw) != nil || json.Unmarshal([]byte(l), &e) != nil {
			t.Fatalf("not a JSON object: %q", l)
		}
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, fields) {
			t.Errorf("an audit line has the fields %v, want %v", keys, fields)
		}
		lines = append(lines, e)
	}
	return lines
}

// Issue 11, the audit trail on both databases: a throttled login, a
// session ended by --session-max, a key rotation and a key revocation
// each leave one event with the contract's fields, read back with
// `cachegate audit --json`; the key events are written by the key store
// with the change (so exactly once), and no event holds a password or a
// token.
func TestAuditSecurityEventsOnTheBinary(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			const password, guess = "Audit-e2e-passw0rd", "Wrong-guess-passw0rd"
			cfg := contract.AuthHTTPConfig{UsernameLimit: 2, AddressLimit: 100}
			b := &authBinary{dir: t.TempDir(), client: newClient()}
			b.dbURL, b.driver, b.dsn = db.open(t, b.dir)
			b.srv = startServer(t, serverConfig{Dir: b.dir, Args: append(authArgs(b.dbURL, cfg), "--session-max", "3s")})
			userID := b.addUser(t, "Sessioner", password, true)
			c, base := b.client, b.srv.URL
			start := time.Now()

			// login.throttled: the third guess at a username with limit 2.
			body := []byte(`{"username":" Guessed ","password":"` + guess + `"}`)
			for range 2 {
				mustSend(t, c, http.MethodPost, base+"/auth/login", body).want(t, http.StatusUnauthorized)
			}
			mustSend(t, c, http.MethodPost, base+"/auth/login", body, "X-Request-Id", "rid-throttled").want(t, http.StatusTooManyRequests)

			// session.expired: a refresh once --session-max has passed.
			login := time.Now()
			p := loginAt(t, c, base, "sessioner", password)
			time.Sleep(time.Until(login.Add(3 * time.Second)))
			refresh := []byte(`{"refreshToken":"` + p.Refresh + `"}`)
			mustSend(t, c, http.MethodPost, base+"/auth/refresh", refresh, "X-Request-Id", "rid-expired").want(t, http.StatusUnauthorized)

			// key.rotated, key.revoked: the CLI on the same database.
			old := b.signingKey(t).ID
			kid := b.rotate(t)
			if r := b.cli(t, "", "keys", "revoke", "--", old); r.Code != 0 { // a kid may start with "-"
				t.Fatalf("keys revoke: status %d, stderr %q", r.Code, r.Stderr)
			}

			secrets := []string{password, guess, p.Access, p.Refresh}
			byType := map[string][]auditLine{}
			for _, e := range b.readAudit(t, secrets) {
				byType[e.Type] = append(byType[e.Type], e)
				if e.Time.Before(start.Add(-time.Second)) || e.Time.After(time.Now().Add(time.Second)) {
					t.Errorf("%s at %v, not during the test", e.Type, e.Time)
				}
			}
			one := func(typ string) auditLine {
				t.Helper()
				if len(byType[typ]) != 1 {
					t.Fatalf("%s events: %+v, want one", typ, byType[typ])
				}
				return byType[typ][0]
			}
			for typ, w := range map[string]auditLine{
				"login.throttled": {Username: " Guessed ", Address: "127.0.0.1", RequestID: "rid-throttled"},
				"session.expired": {UserID: userID, Username: "Sessioner", Address: "127.0.0.1", RequestID: "rid-expired",
					Family: one("login.succeeded").Family},
				"key.rotated": {Family: kid},
				"key.revoked": {Family: old},
			} {
				got := one(typ)
				if got.Count != 1 || !got.LastSeen.Equal(got.Time) {
					t.Errorf("%s event: count %d, last seen %v, want 1 and its time", typ, got.Count, got.LastSeen)
				}
				got.Time, got.Type, got.Count, got.LastSeen = time.Time{}, "", 0, time.Time{}
				if got != w {
					t.Errorf("%s event %+v, want %+v", typ, got, w)
				}
			}
			if f := one("login.succeeded").Family; f == "" {
				t.Error("the login event names no family")
			}
			if got := b.readAudit(t, secrets, "--type", "key.rotated", "--since", "1h"); len(got) != 1 || got[0].Family != kid {
				t.Errorf("--type key.rotated: %+v, want the one rotation to %s", got, kid)
			}
		})
	}
}

// Issue 22: a flood of failed logins from one address, each naming a
// different 300-character username, adds a few audit events with counts,
// not one per attempt (README, "Audit trail"); the attempts the server
// holds are written when it stops.
func TestAFailedLoginFloodAddsAFewAuditEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "flood.db")
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", db}})
	const attempts = 300
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
		next     atomic.Int64
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient()
			for i := next.Add(1); i <= attempts; i = next.Add(1) {
				user := fmt.Sprintf("%04d", i) + strings.Repeat("u", 296)
				r := mustSend(t, c, http.MethodPost, s.URL+"/auth/login", []byte(`{"username":"`+user+`","password":"wrong password"}`))
				mu.Lock()
				statuses[r.Status]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if statuses[http.StatusUnauthorized] != 100 || statuses[http.StatusTooManyRequests] != attempts-100 {
		t.Errorf("statuses %v, want 100 × 401 (the address's limit), then 429", statuses)
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("cachegate serve exited with %d", code)
	}
	r := runCLI(t, dir, "", nil, "audit", "--json", "--database", db)
	if r.Code != 0 {
		t.Fatalf("cachegate audit: exit %d: %s", r.Code, r.Stderr)
	}
	rows, total := map[string]int{}, 0
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var e auditLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		rows[e.Type]++
		total += e.Count
		if utf8.RuneCountInString(e.Username) > 64 {
			t.Errorf("a stored username of %d characters", utf8.RuneCountInString(e.Username))
		}
	}
	// One window holds at most 5 + 1 failure events and 1 throttled one;
	// the flood may straddle two windows.
	if rows["login.failed"] > 12 || rows["login.throttled"] > 2 || total != attempts {
		t.Errorf("%d attempts stored as %v with counts adding up to %d; want at most 12 and 2 events, counting %d",
			attempts, rows, total, attempts)
	}
}
