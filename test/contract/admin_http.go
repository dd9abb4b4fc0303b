package contract

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// AdminHTTPTarget is one running service the admin suite talks to
// (docs/admin.md): guards on, the assignment "user" under policy owner,
// the login throttle's defaults or looser, and an empty user store.
type AdminHTTPTarget struct {
	// BaseURL is the service's root without a trailing slash.
	BaseURL string
	// AddUser creates an active user as `cachegate users add [--admin]`
	// does and returns its id.
	AddUser func(t *testing.T, username, password string, admin bool) (id string)
	// Client sends the requests; nil means a plain client.
	Client *http.Client
}

// AdminHTTPHarness starts one service; the suite shares it among
// subtests that use users of their own.
type AdminHTTPHarness func(t *testing.T) AdminHTTPTarget

// AdminHTTP runs the HTTP contract of the admin API and self-service
// (docs/admin.md) against real sockets: the guard (401, 403 on every
// admin route, no-store), users, sessions, the audit trail and its live
// stream, signing keys, entries of any assignee, and self-service
// sessions and password. It never prints a token or a password.
func AdminHTTP(t *testing.T, h AdminHTTPHarness) {
	t.Helper()
	tg := h(t)
	if tg.Client == nil {
		tg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	s := &adSuite{t: tg}
	t.Run("guard", s.testGuard)
	t.Run("users", s.testUsers)
	t.Run("sessions", s.testSessions)
	t.Run("audit", s.testAudit)
	t.Run("audit stream", s.testAuditStream)
	t.Run("entries of any assignee", s.testEntries)
	t.Run("self-service", s.testSelf)
	t.Run("revoked admin", s.testRevokedAdmin)
	t.Run("bad input is a 4xx", s.testBadInput)
	// Keys last: a rotation changes what every later login signs with.
	t.Run("keys", s.testKeys)
}

type adSuite struct {
	t AdminHTTPTarget
	n atomic.Int64
}

// adPassword is the password of every user the suite creates.
const adPassword = "admin suite password 27"

// user creates a user with a name of its own and returns name and id.
func (s *adSuite) user(t *testing.T, prefix string, admin bool) (string, string) {
	t.Helper()
	name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e9, s.n.Add(1))
	return name, s.t.AddUser(t, name, adPassword, admin)
}

type adTokens struct {
	Access  string `json:"accessToken"`
	Refresh string `json:"refreshToken"`
}

type adAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a adAnswer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decode %d answer: %v", a.status, err)
	}
}

// send sends a request; body, when not nil, is sent as JSON.
func (s *adSuite) send(t *testing.T, method, path, token string, body any, header ...string) adAnswer {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.t.BaseURL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.t.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return adAnswer{status: resp.StatusCode, header: resp.Header, body: b}
}

func (s *adSuite) expect(t *testing.T, a adAnswer, status int, what string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d; body %.300s", what, a.status, status, a.body)
	}
}

// login signs in with a User-Agent of its own and returns the tokens.
func (s *adSuite) login(t *testing.T, username, password, agent string) adTokens {
	t.Helper()
	a := s.send(t, http.MethodPost, "/auth/login", "", map[string]string{"username": username, "password": password},
		"User-Agent", agent)
	s.expect(t, a, http.StatusCreated, "login of "+username)
	var tk adTokens
	a.decode(t, &tk)
	return tk
}

func (s *adSuite) refresh(t *testing.T, rt string) int {
	t.Helper()
	return s.send(t, http.MethodPost, "/auth/refresh", "", map[string]string{"refreshToken": rt}).status
}

// eventually waits up to 3 s for cond; a revocation reaches the guard
// within a second (docs/admin.md).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 3 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// adminRoutes are every admin route, with a body where it needs one.
var adminRoutes = []struct {
	method, path string
	body         any
}{
	{http.MethodGet, "/admin/users", nil},
	{http.MethodPost, "/admin/users", map[string]any{"username": "x-by-non-admin", "password": adPassword}},
	{http.MethodGet, "/admin/users/{id}", nil},
	{http.MethodPatch, "/admin/users/{id}", map[string]any{"active": false}},
	{http.MethodDelete, "/admin/users/{id}", nil},
	{http.MethodPut, "/admin/users/{id}/password", map[string]any{"password": "another password 27"}},
	{http.MethodGet, "/admin/users/{id}/sessions", nil},
	{http.MethodDelete, "/admin/users/{id}/sessions", nil},
	{http.MethodDelete, "/admin/sessions/{sid}", nil},
	{http.MethodGet, "/admin/audit", nil},
	{http.MethodGet, "/admin/audit/events", nil},
	{http.MethodGet, "/admin/keys", nil},
	{http.MethodPost, "/admin/keys/rotate", map[string]any{"now": true}},
	{http.MethodPost, "/admin/keys/{kid}/revoke", nil},
	{http.MethodGet, "/admin/cache/user", nil},
}

func (s *adSuite) testGuard(t *testing.T) {
	plainName, plainID := s.user(t, "plain", false)
	plain := s.login(t, plainName, adPassword, "guard-test")
	adminName, _ := s.user(t, "guardadmin", true)
	admin := s.login(t, adminName, adPassword, "guard-test")
	for _, rt := range adminRoutes {
		path := strings.NewReplacer("{id}", plainID, "{sid}", plainID, "{kid}", "no-such-kid").Replace(rt.path)
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			a := s.send(t, rt.method, path, "", rt.body)
			s.expect(t, a, http.StatusUnauthorized, "anonymous")
			a = s.send(t, rt.method, path, plain.Access, rt.body)
			s.expect(t, a, http.StatusForbidden, "a user who is not an admin")
			var e struct{ ErrorCode string }
			a.decode(t, &e)
			if e.ErrorCode != "FORBIDDEN" {
				t.Errorf("errorCode %q, want FORBIDDEN", e.ErrorCode)
			}
			if cc := a.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
		})
	}
	// The non-admin's requests changed nothing.
	a := s.send(t, http.MethodGet, "/admin/users/"+plainID, admin.Access, nil)
	s.expect(t, a, http.StatusOK, "the user the non-admin tried to disable")
	var u struct{ Active bool }
	a.decode(t, &u)
	if !u.Active {
		t.Error("a non-admin's PATCH disabled the user")
	}
	if s.refresh(t, plain.Refresh) != http.StatusCreated {
		t.Error("a non-admin's DELETE of sessions ended a session")
	}
	t.Run("a token claiming roles is not an admin: the store decides", func(t *testing.T) {
		parts := strings.Split(plain.Access, ".")
		if len(parts) != 3 {
			t.Fatal("the access token is not a JWS")
		}
		// A forged payload breaks the signature: 401, never 200.
		forged := parts[0] + "." + b64(`{"sub":"`+plainID+`","roles":["admin"]}`) + "." + parts[2]
		if a := s.send(t, http.MethodGet, "/admin/users", forged, nil); a.status != http.StatusUnauthorized {
			t.Errorf("forged roles: status %d, want 401", a.status)
		}
	})
	t.Run("an admin's access token says roles admin, another's does not", func(t *testing.T) {
		if !claimsHaveAdmin(t, admin.Access) {
			t.Error("the admin's access token has no roles: [\"admin\"]")
		}
		if claimsHaveAdmin(t, plain.Access) {
			t.Error("a plain user's access token says admin")
		}
	})
}

func claimsHaveAdmin(t *testing.T, tok string) bool {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatal("not a JWS")
	}
	b, err := b64d(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Roles []string }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return len(c.Roles) == 1 && c.Roles[0] == "admin"
}

type adUser struct {
	ID          string `json:"id"`
	Username    string `json:"username"`
	Active      bool   `json:"active"`
	Admin       bool   `json:"admin"`
	DateCreated string `json:"dateCreated"`
	DateUpdated string `json:"dateUpdated"`
}

func (s *adSuite) testUsers(t *testing.T) {
	adminName, adminID := s.user(t, "usersadmin", true)
	admin := s.login(t, adminName, adPassword, "users-test")
	tok := admin.Access
	name := fmt.Sprintf("Created-%d", time.Now().UnixNano()%1e9)

	a := s.send(t, http.MethodPost, "/admin/users", tok, map[string]any{"username": name, "password": adPassword})
	s.expect(t, a, http.StatusCreated, "create")
	var created adUser
	a.decode(t, &created)
	if created.Username != name || !created.Active || created.Admin || created.ID == "" {
		t.Fatalf("created %+v", created)
	}
	if strings.Contains(string(a.body), "password") || strings.Contains(string(a.body), "$2") {
		t.Error("the user's answer shows its password or hash")
	}
	s.expect(t, s.send(t, http.MethodPost, "/admin/users", tok, map[string]any{"username": strings.ToUpper(name), "password": adPassword}),
		http.StatusConflict, "a taken username")
	for _, bad := range []any{map[string]any{"username": "x"}, map[string]any{"username": "y", "password": "short"},
		map[string]any{"username": "z", "password": adPassword, "extra": 1}, map[string]any{"username": 5, "password": adPassword}} {
		s.expect(t, s.send(t, http.MethodPost, "/admin/users", tok, bad), http.StatusBadRequest, fmt.Sprintf("create %v", bad))
	}

	t.Run("list with the query language", func(t *testing.T) {
		var page struct {
			Data                          []adUser
			Count, Total, Page, PageCount int
		}
		a := s.send(t, http.MethodGet, "/admin/users?filter="+url.QueryEscape("username||$eqL||"+strings.ToLower(name)), tok, nil)
		s.expect(t, a, http.StatusOK, "list")
		a.decode(t, &page)
		if page.Total != 1 || len(page.Data) != 1 || page.Data[0].ID != created.ID || page.Page != 1 || page.PageCount != 1 {
			t.Fatalf("filtered list %+v", page)
		}
		a = s.send(t, http.MethodGet, "/admin/users?filter=admin||$eq||true&sort=dateCreated,DESC&limit=1", tok, nil)
		s.expect(t, a, http.StatusOK, "list admins")
		a.decode(t, &page)
		if page.Count != 1 || page.Total < 2 || !page.Data[0].Admin {
			t.Fatalf("admins, newest first, one a page: %+v", page)
		}
		for _, q := range []string{"filter=password||$eq||x", "filter=admin||$cont||t", "sort=nope", "limit=0", "bogus=1", "filter=active||$eq||maybe"} {
			s.expect(t, s.send(t, http.MethodGet, "/admin/users?"+q, tok, nil), http.StatusBadRequest, q)
		}
	})

	t.Run("disable ends the user's sessions; enable", func(t *testing.T) {
		victim := s.login(t, name, adPassword, "victim")
		a := s.send(t, http.MethodPatch, "/admin/users/"+created.ID, tok, map[string]any{"active": false})
		s.expect(t, a, http.StatusOK, "disable")
		var u adUser
		a.decode(t, &u)
		if u.Active {
			t.Fatal("still active")
		}
		if st := s.refresh(t, victim.Refresh); st != http.StatusUnauthorized {
			t.Errorf("refresh after disable: %d, want 401", st)
		}
		eventually(t, "the disabled user's access token refused", func() bool {
			return s.send(t, http.MethodGet, "/cache/user", victim.Access, nil).status == http.StatusUnauthorized
		})
		s.expect(t, s.send(t, http.MethodPost, "/auth/login", "", map[string]string{"username": name, "password": adPassword}),
			http.StatusUnauthorized, "login of a disabled user")
		s.expect(t, s.send(t, http.MethodPatch, "/admin/users/"+created.ID, tok, map[string]any{"active": true}), http.StatusOK, "enable")
		s.login(t, name, adPassword, "again")
	})

	t.Run("an admin cannot disable, demote or delete themself", func(t *testing.T) {
		for _, b := range []map[string]any{{"active": false}, {"admin": false}} {
			s.expect(t, s.send(t, http.MethodPatch, "/admin/users/"+adminID, tok, b), http.StatusConflict, fmt.Sprint(b))
		}
		s.expect(t, s.send(t, http.MethodDelete, "/admin/users/"+adminID, tok, nil), http.StatusConflict, "delete self")
	})

	t.Run("set a password: sessions end, the new password works", func(t *testing.T) {
		before := s.login(t, name, adPassword, "before")
		const next = "a new password for 27"
		s.expect(t, s.send(t, http.MethodPut, "/admin/users/"+created.ID+"/password", tok, map[string]any{"password": next}),
			http.StatusNoContent, "set password")
		if st := s.refresh(t, before.Refresh); st != http.StatusUnauthorized {
			t.Errorf("refresh after set-password: %d", st)
		}
		s.expect(t, s.send(t, http.MethodPost, "/auth/login", "", map[string]string{"username": name, "password": adPassword}),
			http.StatusUnauthorized, "the old password")
		s.login(t, name, next, "after")
		s.expect(t, s.send(t, http.MethodPut, "/admin/users/"+created.ID+"/password", tok, map[string]any{"password": "short"}),
			http.StatusBadRequest, "a short password")
	})

	t.Run("delete: the user and their sessions go", func(t *testing.T) {
		gone, goneID := s.user(t, "gone", false)
		sess := s.login(t, gone, adPassword, "gone")
		s.expect(t, s.send(t, http.MethodDelete, "/admin/users/"+goneID, tok, nil), http.StatusNoContent, "delete")
		s.expect(t, s.send(t, http.MethodGet, "/admin/users/"+goneID, tok, nil), http.StatusNotFound, "get a deleted user")
		s.expect(t, s.send(t, http.MethodDelete, "/admin/users/"+goneID, tok, nil), http.StatusNotFound, "delete again")
		if st := s.refresh(t, sess.Refresh); st != http.StatusUnauthorized {
			t.Errorf("refresh of a deleted user: %d", st)
		}
		eventually(t, "a deleted user's access token refused", func() bool {
			return s.send(t, http.MethodGet, "/cache/user", sess.Access, nil).status == http.StatusUnauthorized
		})
		s.expect(t, s.send(t, http.MethodGet, "/admin/users/not-a-uuid", tok, nil), http.StatusNotFound, "a malformed id")
	})
}

type adSession struct {
	ID          string `json:"id"`
	UserID      string `json:"userId"`
	DateCreated string `json:"dateCreated"`
	LastUsed    string `json:"lastUsed"`
	Address     string `json:"address"`
	UserAgent   string `json:"userAgent"`
	ExpiresAt   string `json:"expiresAt"`
	Current     *bool  `json:"current"`
}

func (s *adSuite) sessions(t *testing.T, path, tok string) []adSession {
	t.Helper()
	a := s.send(t, http.MethodGet, path, tok, nil)
	s.expect(t, a, http.StatusOK, "GET "+path)
	var l struct{ Data []adSession }
	a.decode(t, &l)
	return l.Data
}

func (s *adSuite) testSessions(t *testing.T) {
	adminName, _ := s.user(t, "sessadmin", true)
	tok := s.login(t, adminName, adPassword, "sessions-admin").Access
	name, id := s.user(t, "devices", false)
	phone := s.login(t, name, adPassword, "phone/1.0")
	laptop := s.login(t, name, adPassword, "laptop/2.0")
	list := s.sessions(t, "/admin/users/"+id+"/sessions", tok)
	if len(list) != 2 {
		t.Fatalf("%d sessions, want 2", len(list))
	}
	agents := map[string]adSession{}
	for _, x := range list {
		agents[x.UserAgent] = x
		if x.UserID != id || x.Address == "" || x.DateCreated == "" || x.LastUsed == "" || x.ExpiresAt == "" || x.Current != nil {
			t.Errorf("session %+v", x)
		}
	}
	if _, ok := agents["phone/1.0"]; !ok {
		t.Fatalf("no session with the phone's user agent: %+v", list)
	}
	// A refresh is a use: it records the new agent and moves lastUsed.
	time.Sleep(5 * time.Millisecond)
	a := s.send(t, http.MethodPost, "/auth/refresh", "", map[string]string{"refreshToken": laptop.Refresh}, "User-Agent", "laptop/2.1")
	s.expect(t, a, http.StatusCreated, "refresh")
	a.decode(t, &laptop)
	list = s.sessions(t, "/admin/users/"+id+"/sessions", tok)
	if len(list) != 2 || list[0].UserAgent != "laptop/2.1" {
		t.Fatalf("after a refresh the laptop's session comes first with its new agent: %+v", list)
	}

	s.expect(t, s.send(t, http.MethodDelete, "/admin/sessions/"+agents["phone/1.0"].ID, tok, nil), http.StatusNoContent, "revoke one")
	if st := s.refresh(t, phone.Refresh); st != http.StatusUnauthorized {
		t.Errorf("the revoked session's refresh: %d", st)
	}
	eventually(t, "the revoked session's access token refused", func() bool {
		return s.send(t, http.MethodGet, "/cache/user", phone.Access, nil).status == http.StatusUnauthorized
	})
	s.expect(t, s.send(t, http.MethodGet, "/cache/user", laptop.Access, nil), http.StatusOK, "the other session")
	s.expect(t, s.send(t, http.MethodDelete, "/admin/sessions/0190a000-0000-7000-8000-000000000000", tok, nil), http.StatusNotFound, "an unknown session")
	if l := s.sessions(t, "/admin/users/"+id+"/sessions", tok); len(l) != 1 {
		t.Errorf("%d sessions after revoking one, want 1", len(l))
	}
	s.expect(t, s.send(t, http.MethodDelete, "/admin/users/"+id+"/sessions", tok, nil), http.StatusNoContent, "revoke all")
	if st := s.refresh(t, laptop.Refresh); st != http.StatusUnauthorized {
		t.Errorf("refresh after revoke all: %d", st)
	}
	if l := s.sessions(t, "/admin/users/"+id+"/sessions", tok); len(l) != 0 {
		t.Errorf("%d sessions after revoking all", len(l))
	}
	s.expect(t, s.send(t, http.MethodGet, "/admin/users/0190a000-0000-7000-8000-000000000000/sessions", tok, nil), http.StatusNotFound, "sessions of nobody")
}

type adEvent struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Time     string `json:"time"`
	UserID   string `json:"userId"`
	Username string `json:"username"`
	Address  string `json:"address"`
	Count    int    `json:"count"`
	Actor    *struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"actor"`
	Detail string `json:"detail"`
}

type adAuditPage struct {
	Data []adEvent
	Next *string
}

func (s *adSuite) testAudit(t *testing.T) {
	adminName, adminID := s.user(t, "auditadmin", true)
	tok := s.login(t, adminName, adPassword, "audit").Access
	start := time.Now().Add(-time.Second).UTC()
	target, targetID := s.user(t, "audited", false)
	// Three disables: each is user.disabled, as on the command line.
	for _, active := range []bool{false, true, false, true, false} {
		s.expect(t, s.send(t, http.MethodPatch, "/admin/users/"+targetID, tok, map[string]any{"active": active}), http.StatusOK, "patch")
	}
	q := "/admin/audit?type=user.disabled&user=" + url.QueryEscape(target)
	a := s.send(t, http.MethodGet, q, tok, nil)
	s.expect(t, a, http.StatusOK, "query by type and user")
	var page adAuditPage
	a.decode(t, &page)
	if len(page.Data) != 3 || page.Next != nil {
		t.Fatalf("%d events (next %v), want 3 and no next page", len(page.Data), page.Next)
	}
	e := page.Data[0]
	if e.Actor == nil || e.Actor.ID != adminID || e.Actor.Username != adminName || e.UserID != targetID || e.Type != "user.disabled" || e.Count != 1 {
		t.Errorf("newest event %+v (actor %+v)", e, e.Actor)
	}
	// Paging: one a page, following next, newest first, each once.
	var seen []string
	cursor := ""
	for range 5 {
		p := q + "&limit=1"
		if cursor != "" {
			p += "&before=" + url.QueryEscape(cursor)
		}
		a := s.send(t, http.MethodGet, p, tok, nil)
		s.expect(t, a, http.StatusOK, "page")
		var pg adAuditPage
		a.decode(t, &pg)
		for _, x := range pg.Data {
			seen = append(seen, x.ID)
		}
		if pg.Next == nil {
			break
		}
		cursor = *pg.Next
	}
	if len(seen) != 3 || seen[0] != page.Data[0].ID || seen[1] != page.Data[1].ID || seen[2] != page.Data[2].ID {
		t.Errorf("paged ids %v, want %v", seen, []string{page.Data[0].ID, page.Data[1].ID, page.Data[2].ID})
	}
	// Address and time range.
	addr := e.Address
	a = s.send(t, http.MethodGet, "/admin/audit?address="+url.QueryEscape(addr)+"&since="+url.QueryEscape(start.Format(time.RFC3339Nano))+"&user="+url.QueryEscape(target), tok, nil)
	s.expect(t, a, http.StatusOK, "by address and since")
	a.decode(t, &page)
	if len(page.Data) < 3 {
		t.Errorf("by address %q since %s: %d events", addr, start, len(page.Data))
	}
	a = s.send(t, http.MethodGet, "/admin/audit?user="+url.QueryEscape(target)+"&until="+url.QueryEscape(start.Format(time.RFC3339Nano)), tok, nil)
	s.expect(t, a, http.StatusOK, "until")
	a.decode(t, &page)
	if len(page.Data) != 0 {
		t.Errorf("%d events of %s before it existed", len(page.Data), target)
	}
	a = s.send(t, http.MethodGet, "/admin/audit?address=192.0.2.255&user="+url.QueryEscape(target), tok, nil)
	a.decode(t, &page)
	if len(page.Data) != 0 {
		t.Errorf("%d events from an address nobody used", len(page.Data))
	}
	for _, bad := range []string{"type=nope", "since=yesterday", "limit=1001", "before=garbage", "user=a&user=b", "other=1"} {
		s.expect(t, s.send(t, http.MethodGet, "/admin/audit?"+bad, tok, nil), http.StatusBadRequest, bad)
	}
}

func (s *adSuite) testAuditStream(t *testing.T) {
	adminName, adminID := s.user(t, "streamadmin", true)
	otherAdmin, _ := s.user(t, "streamadmin2", true)
	other := s.login(t, otherAdmin, adPassword, "stream2").Access
	tok := s.login(t, adminName, adPassword, "stream").Access
	// EventSource sends no headers: the token rides in access_token.
	req, err := http.NewRequest(http.MethodGet, s.t.BaseURL+"/admin/audit/events?access_token="+url.QueryEscape(tok), nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	first := <-lines
	if !strings.HasPrefix(first, "retry: ") {
		t.Errorf("first line %q, want retry:", first)
	}
	name := fmt.Sprintf("streamed-%d", time.Now().UnixNano()%1e9)
	s.expect(t, s.send(t, http.MethodPost, "/admin/users", tok, map[string]any{"username": name, "password": adPassword}), http.StatusCreated, "create")
	timeout := time.After(10 * time.Second)
	var event, id string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended before the event")
			}
			switch {
			case strings.HasPrefix(l, "id: "):
				id = l[4:]
			case strings.HasPrefix(l, "event: "):
				event = l[7:]
			case strings.HasPrefix(l, "data: ") && event == "audit":
				var e adEvent
				if err := json.Unmarshal([]byte(l[6:]), &e); err != nil {
					t.Fatalf("data %q: %v", l, err)
				}
				if e.Type == "user.added" && e.Username == name {
					if e.ID != id || e.Actor == nil || e.Actor.Username != adminName {
						t.Errorf("event %+v under id %q", e, id)
					}
					s.auditStreamEndsForADemotedAdmin(t, lines, other, adminID)
					return
				}
			}
		case <-timeout:
			t.Fatal("no user.added event within 10 s")
		}
	}
}

// auditStreamEndsForADemotedAdmin demotes the stream's admin with
// another admin's token: the stream ends with reason "not an admin".
func (s *adSuite) auditStreamEndsForADemotedAdmin(t *testing.T, lines <-chan string, other, adminID string) {
	t.Helper()
	s.expect(t, s.send(t, http.MethodPatch, "/admin/users/"+adminID, other, map[string]any{"admin": false}), http.StatusOK, "demote")
	timeout := time.After(10 * time.Second)
	ended := false
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				if !ended {
					t.Error("the stream closed without event: end")
				}
				return
			}
			if l == "event: end" {
				ended = true
			}
			if ended && strings.HasPrefix(l, "data: ") && !strings.Contains(l, "not an admin") {
				t.Errorf("end %q, want the reason not an admin", l)
			}
		case <-timeout:
			t.Fatal("the demoted admin's stream did not end within 10 s")
		}
	}
}

func (s *adSuite) testEntries(t *testing.T) {
	adminName, _ := s.user(t, "entriesadmin", true)
	admin := s.login(t, adminName, adPassword, "entries").Access
	ownerName, ownerID := s.user(t, "owner", false)
	owner := s.login(t, ownerName, adPassword, "entries").Access
	key := fmt.Sprintf("k-%d", time.Now().UnixNano())
	s.expect(t, s.send(t, http.MethodPost, "/cache/user", owner, map[string]any{"key": key, "type": "t", "data": 1, "assignee": map[string]any{"id": ownerID}}),
		http.StatusCreated, "the owner's entry")
	q := "?filter=" + url.QueryEscape("key||$eq||"+key) + "&page=1"
	var page struct {
		Data  []struct{ Key string }
		Total int
	}
	a := s.send(t, http.MethodGet, "/cache/user"+q, admin, nil)
	s.expect(t, a, http.StatusOK, "the admin's own list")
	a.decode(t, &page)
	if page.Total != 0 {
		t.Fatalf("the owner policy lets the admin's own list see another's entry")
	}
	a = s.send(t, http.MethodGet, "/admin/cache/user"+q, admin, nil)
	s.expect(t, a, http.StatusOK, "entries of any assignee")
	a.decode(t, &page)
	if page.Total != 1 || len(page.Data) != 1 || page.Data[0].Key != key {
		t.Fatalf("admin list %+v", page)
	}
	s.expect(t, s.send(t, http.MethodGet, "/admin/cache/nope", admin, nil), http.StatusNotFound, "an unknown assignment")
	s.expect(t, s.send(t, http.MethodGet, "/admin/cache/user?filter=data||$eq||1", admin, nil), http.StatusBadRequest, "a bad filter")
}

func (s *adSuite) testSelf(t *testing.T) {
	name, _ := s.user(t, "self", false)
	here := s.login(t, name, adPassword, "here")
	there := s.login(t, name, adPassword, "there")
	list := s.sessions(t, "/auth/sessions", here.Access)
	if len(list) != 2 {
		t.Fatalf("%d own sessions, want 2", len(list))
	}
	var thereID string
	for _, x := range list {
		if x.Current == nil {
			t.Fatal("a session without current")
		}
		if *x.Current != (x.UserAgent == "here") {
			t.Errorf("session %s current %v", x.UserAgent, *x.Current)
		}
		if x.UserAgent == "there" {
			thereID = x.ID
		}
	}
	a := s.send(t, http.MethodGet, "/auth/sessions", here.Access, nil)
	if cc := a.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	otherName, _ := s.user(t, "other", false)
	other := s.login(t, otherName, adPassword, "other")
	s.expect(t, s.send(t, http.MethodDelete, "/auth/sessions/"+thereID, other.Access, nil), http.StatusNotFound, "another user's session")
	s.expect(t, s.send(t, http.MethodDelete, "/auth/sessions/"+thereID, here.Access, nil), http.StatusNoContent, "sign out there")
	if st := s.refresh(t, there.Refresh); st != http.StatusUnauthorized {
		t.Errorf("the signed-out device's refresh: %d", st)
	}
	s.expect(t, s.send(t, http.MethodGet, "/auth/sessions", "", nil), http.StatusUnauthorized, "anonymous")

	third := s.login(t, name, adPassword, "third")
	s.expect(t, s.send(t, http.MethodPost, "/auth/password", here.Access, map[string]any{"currentPassword": "wrong password 27", "newPassword": "new password 27"}),
		http.StatusUnauthorized, "a wrong current password")
	s.expect(t, s.send(t, http.MethodPost, "/auth/password", here.Access, map[string]any{"currentPassword": adPassword, "newPassword": "short"}),
		http.StatusBadRequest, "a short new password")
	s.expect(t, s.send(t, http.MethodPost, "/auth/password", here.Access, map[string]any{"currentPassword": adPassword, "newPassword": "new password 27"}),
		http.StatusNoContent, "change")
	if st := s.refresh(t, third.Refresh); st != http.StatusUnauthorized {
		t.Errorf("another session after the change: refresh %d", st)
	}
	s.expect(t, s.send(t, http.MethodGet, "/cache/user", here.Access, nil), http.StatusOK, "the current session after the change")
	if st := s.refresh(t, here.Refresh); st != http.StatusCreated {
		t.Errorf("the current session's refresh after the change: %d", st)
	}
	s.login(t, name, "new password 27", "new")

	t.Run("wrong current passwords are throttled like logins", func(t *testing.T) {
		tname, _ := s.user(t, "throttled", false)
		tk := s.login(t, tname, adPassword, "t").Access
		got429 := false
		for range 30 {
			a := s.send(t, http.MethodPost, "/auth/password", tk, map[string]any{"currentPassword": "wrong password 27", "newPassword": "new password 27"})
			if a.status == http.StatusTooManyRequests {
				got429 = true
				break
			}
			if a.status != http.StatusUnauthorized {
				t.Fatalf("a wrong current password: %d", a.status)
			}
		}
		if !got429 {
			t.Error("30 wrong current passwords were never throttled")
		}
	})
}

func (s *adSuite) testRevokedAdmin(t *testing.T) {
	aName, _ := s.user(t, "senior", true)
	a := s.login(t, aName, adPassword, "senior").Access
	bName, bID := s.user(t, "junior", true)
	b := s.login(t, bName, adPassword, "junior").Access
	s.expect(t, s.send(t, http.MethodGet, "/admin/users", b, nil), http.StatusOK, "an admin")
	s.expect(t, s.send(t, http.MethodPatch, "/admin/users/"+bID, a, map[string]any{"admin": false}), http.StatusOK, "demote")
	eventually(t, "the demoted admin refused", func() bool {
		return s.send(t, http.MethodGet, "/admin/users", b, nil).status == http.StatusForbidden
	})
	s.expect(t, s.send(t, http.MethodPatch, "/admin/users/"+bID, a, map[string]any{"admin": true}), http.StatusOK, "promote")
	eventually(t, "the promoted admin admitted", func() bool {
		return s.send(t, http.MethodGet, "/admin/users", b, nil).status == http.StatusOK
	})
}

func (s *adSuite) testKeys(t *testing.T) {
	adminName, _ := s.user(t, "keysadmin", true)
	tok := s.login(t, adminName, adPassword, "keys").Access
	type key struct {
		Kid, Algorithm, State string
		RevokedAt             *string
	}
	var list struct{ Data []key }
	a := s.send(t, http.MethodGet, "/admin/keys", tok, nil)
	s.expect(t, a, http.StatusOK, "list")
	a.decode(t, &list)
	if len(list.Data) == 0 || strings.Contains(string(a.body), "private") {
		t.Fatalf("keys %s", a.body)
	}
	a = s.send(t, http.MethodPost, "/admin/keys/rotate", tok, map[string]any{})
	s.expect(t, a, http.StatusCreated, "rotate")
	var k key
	a.decode(t, &k)
	if k.Kid == "" || k.State != "published" {
		t.Errorf("rotated %+v, want a published key", k)
	}
	s.expect(t, s.send(t, http.MethodPost, "/admin/keys/"+k.Kid+"/revoke", tok, nil), http.StatusNoContent, "revoke")
	a = s.send(t, http.MethodGet, "/admin/keys", tok, nil)
	a.decode(t, &list)
	found := false
	for _, x := range list.Data {
		if x.Kid == k.Kid {
			found = x.State == "revoked" && x.RevokedAt != nil
		}
	}
	if !found {
		t.Errorf("the revoked key is not listed revoked: %s", a.body)
	}
	s.expect(t, s.send(t, http.MethodPost, "/admin/keys/no-such-kid/revoke", tok, nil), http.StatusNotFound, "an unknown kid")
	var page adAuditPage
	s.send(t, http.MethodGet, "/admin/audit?type=key.revoked&user=", tok, nil).decode(t, &page)
	if len(page.Data) == 0 || page.Data[0].Actor == nil || page.Data[0].Actor.Username != adminName {
		t.Errorf("no key.revoked event naming the admin")
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func b64d(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

// testBadInput: ids and parameters a client may send that no store can
// hold (NUL, invalid UTF-8, huge) are 4xx answers, never 5xx.
func (s *adSuite) testBadInput(t *testing.T) {
	adminName, _ := s.user(t, "badadmin", true)
	tok := s.login(t, adminName, adPassword, "bad").Access
	long := strings.Repeat("x", 5000)
	for _, c := range []struct {
		method, path string
		body         any
		status       int
	}{
		{http.MethodDelete, "/admin/sessions/%00", nil, http.StatusNotFound},
		{http.MethodDelete, "/admin/sessions/%FF%FE", nil, http.StatusNotFound},
		{http.MethodPost, "/admin/keys/%00/revoke", nil, http.StatusNotFound},
		{http.MethodPost, "/admin/keys/" + long + "/revoke", nil, http.StatusNotFound},
		{http.MethodGet, "/admin/users/%00", nil, http.StatusNotFound},
		{http.MethodGet, "/admin/users/%00/sessions", nil, http.StatusNotFound},
		{http.MethodPatch, "/admin/users/%00", map[string]any{"active": true}, http.StatusNotFound},
		{http.MethodGet, "/admin/audit?user=%00", nil, http.StatusBadRequest},
		{http.MethodGet, "/admin/audit?address=%FF", nil, http.StatusBadRequest},
		{http.MethodGet, "/admin/audit?before=" + long, nil, http.StatusBadRequest},
		{http.MethodGet, "/admin/users?filter=username||$eq||%00", nil, http.StatusOK},
		{http.MethodGet, "/admin/users?" + long, nil, http.StatusBadRequest},
		{http.MethodPost, "/admin/users", map[string]any{"username": "a\x00b", "password": adPassword}, http.StatusBadRequest},
		{http.MethodPost, "/admin/users", map[string]any{"username": "ctl\nname", "password": adPassword}, http.StatusBadRequest},
		{http.MethodPost, "/admin/users", map[string]any{"username": "esc\x1b[2J", "password": adPassword}, http.StatusBadRequest},
		{http.MethodPost, "/admin/users", []int{1}, http.StatusBadRequest},
		{http.MethodPatch, "/admin/users/0190a000-0000-7000-8000-000000000000", map[string]any{"active": "no"}, http.StatusBadRequest},
		{http.MethodDelete, "/auth/sessions/%00", nil, http.StatusNotFound},
		{http.MethodPost, "/auth/password", map[string]any{"newPassword": 5}, http.StatusBadRequest},
	} {
		if a := s.send(t, c.method, c.path, tok, c.body); a.status != c.status {
			t.Errorf("%s %.60s: %d, want %d; body %.200s", c.method, c.path, a.status, c.status, a.body)
		}
	}
}
