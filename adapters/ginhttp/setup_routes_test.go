package ginhttp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
)

// setupServer is a server with the set-up route and the console, its
// link issued, and its log.
type setupServer struct {
	server *ginhttp.Server
	token  string
	logs   *lockedBuffer
}

const setupTestPassword = "a password of 27 bytes long"

func newSetupServer(t *testing.T, fromAnywhere bool) *setupServer {
	t.Helper()
	clock, ids := system.Clock{}, system.UUIDv7{}
	refresh := memstore.NewRefreshStore(nil)
	users := memstore.NewUserRepository(nil, refresh)
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	check, err := application.NewAdminCheck(users, clock)
	if err != nil {
		t.Fatal(err)
	}
	audit := application.NewAuditTrail(application.AuditTrailDeps{Store: memstore.NewAuditLog(),
		Log: slog.New(slog.NewJSONHandler(logs, nil)), Clock: clock, IDs: ids})
	admins, err := application.NewUsers(application.UsersDeps{Users: users, Hasher: hasher, Clock: clock, IDs: ids,
		Audit: audit, Check: check, Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	link, err := application.NewFirstAdmin(admins, admins.HasAdmin, clock, system.Secrets{}, application.FirstAdminOptions{FromAnywhere: fromAnywhere})
	if err != nil {
		t.Fatal(err)
	}
	l, err := link.Issue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ginhttp.New(ginhttp.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Setup: &admin.SetupOptions{Link: link}, Console: true})
	if err != nil {
		t.Fatal(err)
	}
	return &setupServer{server: srv, token: l.Token, logs: logs}
}

func setupRequest(token, username string) string {
	b, _ := json.Marshal(map[string]string{"token": token, "username": username, "password": setupTestPassword})
	return string(b)
}

// errorCode reads the errorCode of an error body.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var e struct{ ErrorCode string }
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return e.ErrorCode
}

func TestSetUpLinkMakesTheFirstAdminOverLoopbackOnce(t *testing.T) {
	t.Parallel()
	s := newSetupServer(t, false)
	ts := httptest.NewServer(s.server.Handler())
	t.Cleanup(ts.Close)

	for _, c := range []struct {
		name, body string
		hdr        []string
		status     int
		code       string
	}{
		{"a token that is not the link's is refused", setupRequest(s.token+"x", "root"), nil, 403, "SETUP_LINK_INVALID"},
		{"a forwarded request is not local", setupRequest(s.token, "root"), []string{"X-Forwarded-For", "127.0.0.1"}, 403, "SETUP_NOT_LOCAL"},
		{"a request with Forwarded is not local", setupRequest(s.token, "root"), []string{"Forwarded", "for=127.0.0.1"}, 403, "SETUP_NOT_LOCAL"},
		{"a number for a token is 400", `{"token":1,"username":"root","password":"` + setupTestPassword + `"}`, nil, 400, "VALIDATION_FAILED"},
		{"an unknown member is 400", `{"token":"x","admin":true}`, nil, 400, "VALIDATION_FAILED"},
		{"no body is 400", "", nil, 400, "VALIDATION_FAILED"},
		{"a short password is 400", strings.Replace(setupRequest(s.token, "root"), setupTestPassword, "short", 1), nil, 400, "VALIDATION_FAILED"},
		{"the link makes the admin", setupRequest(s.token, "root"), nil, 201, ""},
		{"the link used again is refused", setupRequest(s.token, "root2"), nil, 403, "SETUP_LINK_USED"},
	} {
		status, h, body := do(t, http.MethodPost, ts.URL+admin.SetupPath, c.body, c.hdr...)
		if status != c.status {
			t.Fatalf("%s: %d %s, want %d", c.name, status, body, c.status)
		}
		if got := h.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", c.name, got)
		}
		if c.code != "" {
			if got := errorCode(t, body); got != c.code {
				t.Errorf("%s: errorCode %s, want %s", c.name, got, c.code)
			}
			continue
		}
		var u struct {
			Username string
			Admin    bool
			Active   bool
		}
		if err := json.Unmarshal([]byte(body), &u); err != nil || u.Username != "root" || !u.Admin || !u.Active {
			t.Errorf("%s: %s (%v), want the active admin root", c.name, body, err)
		}
	}
	if strings.Contains(s.logs.String(), s.token) {
		t.Error("a log line holds the set-up token")
	}
	if !strings.Contains(s.logs.String(), `"detail":"setup-link"`) {
		t.Errorf("no audit line with the detail setup-link in the log:\n%s", s.logs.String())
	}
}

// The peer address decides, never a header: a request whose TCP peer is
// another machine is refused unless the link is open to any address.
func TestSetUpLinkRefusesAnotherMachineUnlessAllowed(t *testing.T) {
	t.Parallel()
	for _, anywhere := range []bool{false, true} {
		s := newSetupServer(t, anywhere)
		req := httptest.NewRequest(http.MethodPost, admin.SetupPath, strings.NewReader(setupRequest(s.token, "root")))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = "192.0.2.7:40000"
		rec := httptest.NewRecorder()
		s.server.Handler().ServeHTTP(rec, req)
		want := http.StatusForbidden
		if anywhere {
			want = http.StatusCreated
		}
		if rec.Code != want {
			t.Errorf("from anywhere %v: %d %s, want %d", anywhere, rec.Code, rec.Body, want)
		}
		if !anywhere && errorCode(t, rec.Body.String()) != "SETUP_NOT_LOCAL" {
			t.Errorf("errorCode of %s, want SETUP_NOT_LOCAL", rec.Body)
		}
	}
}

// Over a real socket on an address of this machine that is not loopback,
// when it has one: the peer is that address, so the link refuses.
func TestSetUpLinkRefusesANonLoopbackPeerOverASocket(t *testing.T) {
	t.Parallel()
	ip := nonLoopbackAddr(t)
	if ip == "" {
		t.Skip("this machine has no non-loopback address; TestSetUpLinkRefusesAnotherMachineUnlessAllowed covers the rule")
	}
	s := newSetupServer(t, false)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	ts := httptest.NewUnstartedServer(s.server.Handler())
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	status, _, body := do(t, http.MethodPost, ts.URL+admin.SetupPath, setupRequest(s.token, "root"))
	if status != http.StatusForbidden || errorCode(t, body) != "SETUP_NOT_LOCAL" {
		t.Errorf("from %s: %d %s, want 403 SETUP_NOT_LOCAL", ip, status, body)
	}
}

func nonLoopbackAddr(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

func TestConsoleServesTheSetUpPage(t *testing.T) {
	t.Parallel()
	s := newSetupServer(t, false)
	ts := httptest.NewServer(s.server.Handler())
	t.Cleanup(ts.Close)
	for _, p := range []string{ginhttp.ConsoleSetupPath, ginhttp.ConsoleSetupPath + ".html"} {
		status, h, body := do(t, http.MethodGet, ts.URL+p, "")
		if status != http.StatusOK || !strings.Contains(body, `src="setup.js"`) {
			t.Errorf("GET %s: %d, want 200 with the set-up page", p, status)
		}
		checkConsoleHeaders(t, p, h)
	}
	status, _, body := do(t, http.MethodGet, ts.URL+"/console/setup.js", "")
	if status != http.StatusOK || !strings.Contains(body, admin.SetupPath) {
		t.Errorf("GET /console/setup.js: %d, want 200 posting to %s", status, admin.SetupPath)
	}
}
