package ginhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Every /admin route the router mounts, whatever list it came from,
// answers 401 to an anonymous caller and 403 FORBIDDEN to a signed-in
// user who is not an admin, both with Cache-Control: no-store.
func TestEveryMountedAdminRouteRefusesNonAdmins(t *testing.T) {
	t.Parallel()
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	login, _ := json.Marshal(map[string]string{"username": oasUsername, "password": oasPassword})
	x := oasSend(t, http.MethodPost, ts.URL+"/auth/login", "application/json", login)
	var pair struct{ AccessToken string }
	if err := json.Unmarshal(x.body, &pair); err != nil || pair.AccessToken == "" {
		t.Fatalf("login: %d", x.status)
	}
	n := 0
	for _, r := range st.server.mountedRoutes() {
		if !strings.HasPrefix(r.Path, "/admin/") {
			continue
		}
		n++
		path := r.Path
		for _, p := range []string{"{id}", "{sid}", "{kid}"} {
			path = strings.ReplaceAll(path, p, st.userID)
		}
		path = strings.ReplaceAll(path, "{assignment}", "user")
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			t.Parallel()
			if x := oasSend(t, r.Method, ts.URL+path, "application/json", []byte(`{}`)); x.status != http.StatusUnauthorized ||
				x.header.Get("Cache-Control") != "no-store" {
				t.Errorf("anonymous: %d, Cache-Control %q; want 401, no-store", x.status, x.header.Get("Cache-Control"))
			}
			x := oasSend(t, r.Method, ts.URL+path, "application/json", []byte(`{"active":false}`), "Authorization", "Bearer "+pair.AccessToken)
			var e struct{ ErrorCode string }
			_ = json.Unmarshal(x.body, &e)
			if x.status != http.StatusForbidden || e.ErrorCode != "FORBIDDEN" {
				t.Errorf("a user who is not an admin: %d %q, want 403 FORBIDDEN", x.status, e.ErrorCode)
			}
			if cc := x.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
		})
	}
	if n < 15 {
		t.Errorf("%d admin routes mounted, want the 15 of docs/admin.md", n)
	}
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/auth/sessions"}, {http.MethodDelete, "/auth/sessions/" + st.userID}, {http.MethodPost, "/auth/password"},
	} {
		t.Run("self-service "+r.method+" "+r.path+" anonymous", func(t *testing.T) {
			t.Parallel()
			if x := oasSend(t, r.method, ts.URL+r.path, "application/json", []byte(`{}`)); x.status != http.StatusUnauthorized ||
				x.header.Get("Cache-Control") != "no-store" {
				t.Errorf("%d, Cache-Control %q; want 401, no-store", x.status, x.header.Get("Cache-Control"))
			}
		})
	}
}

// plainUsers is a user store swapped by an embedder: a
// ports.UserRepository and nothing more (no ports.UserDirectory).
type plainUsers struct{ ports.UserRepository }

// A user store that cannot list or delete answers 501 NOT_IMPLEMENTED on
// those two routes; the other admin routes work as before.
func TestAUserStoreWithoutTheDirectoryAnswers501(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock, ids := system.Clock{}, system.UUIDv7{}
	refresh := memstore.NewRefreshStore(nil)
	mem := memstore.NewUserRepository(nil, refresh)
	users := plainUsers{mem}
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := josejwt.New(ctx, josejwt.Options{Keys: memstore.NewKeyStore(nil), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	lookup := application.RepoUserLookup{Users: users}
	validator, err := application.NewCredentialValidator(ctx, lookup, hasher, hasher)
	if err != nil {
		t.Fatal(err)
	}
	login, err := application.NewLogin(application.LoginDeps{Validator: validator,
		Tokens: application.TokenDeps{Issuer: tokens.Issuer(), Refresh: refresh, Clock: clock, IDs: ids}})
	if err != nil {
		t.Fatal(err)
	}
	authn, err := application.NewAuthenticate(tokens.Verifier(), nil, lookup, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	au, check := testUsers(t, users, hasher, clock, ids, refresh)
	_, err = au.Add(ctx, domain.System(), application.AddUserInput{Username: "root", Password: oasPassword, Active: true, Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := au.Add(ctx, domain.System(), application.AddUserInput{Username: "other", Password: oasPassword, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Authenticator: oasAuth{authn}, EnableGuards: true, Auth: &AuthOptions{Login: login},
		Admin: &admin.Options{Check: check, Users: au}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	b, _ := json.Marshal(map[string]string{"username": "root", "password": oasPassword})
	x := oasSend(t, http.MethodPost, ts.URL+"/auth/login", "application/json", b)
	var pair struct{ AccessToken string }
	if err := json.Unmarshal(x.body, &pair); err != nil || pair.AccessToken == "" {
		t.Fatalf("login: %d", x.status)
	}
	auth := []string{"Authorization", "Bearer " + pair.AccessToken}
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/admin/users"},
		{http.MethodDelete, "/admin/users/" + other.ID},
	} {
		x := oasSend(t, c.method, ts.URL+c.path, "", nil, auth...)
		var e struct{ ErrorCode string }
		_ = json.Unmarshal(x.body, &e)
		if x.status != http.StatusNotImplemented || e.ErrorCode != "NOT_IMPLEMENTED" {
			t.Errorf("%s %s: %d %q, want 501 NOT_IMPLEMENTED", c.method, c.path, x.status, e.ErrorCode)
		}
	}
	if x := oasSend(t, http.MethodGet, ts.URL+"/admin/users/"+other.ID, "", nil, auth...); x.status != http.StatusOK {
		t.Errorf("GET a user: %d, want 200", x.status)
	}
	x = oasSend(t, http.MethodPatch, ts.URL+"/admin/users/"+other.ID, "application/json", []byte(`{"active":false}`), auth...)
	if x.status != http.StatusOK {
		t.Errorf("PATCH a user: %d, want 200", x.status)
	}
	if _, err := mem.UserByID(ctx, other.ID); err != nil {
		t.Errorf("the user is gone after a 501 delete: %v", err)
	}
}

// The admin API's real answers, successes and failures, are as the
// OpenAPI document describes them.
func TestAdminAnswersMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	check := newOASChecker(t)
	if _, err := st.users.Add(context.Background(), domain.System(), application.AddUserInput{Username: "root", Password: oasPassword, Active: true, Admin: true}); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"username": "root", "password": oasPassword})
	x := oasSend(t, http.MethodPost, ts.URL+"/auth/login", "application/json", b, "User-Agent", "oas-test")
	var pair struct{ AccessToken string }
	if err := json.Unmarshal(x.body, &pair); err != nil || pair.AccessToken == "" {
		t.Fatalf("login: %d", x.status)
	}
	auth := []string{"Authorization", "Bearer " + pair.AccessToken}
	const nobody = "0190a000-0000-7000-8000-000000000000"
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{http.MethodGet, "/admin/users?sort=username,DESC&limit=5", "", 200},
		{http.MethodGet, "/admin/users?filter=bogus||$eq||1", "", 400},
		{http.MethodPost, "/admin/users", `{"username":"made","password":"` + oasPassword + `","admin":false}`, 201},
		{http.MethodPost, "/admin/users", `{"username":"made","password":"` + oasPassword + `"}`, 409},
		{http.MethodGet, "/admin/users/" + st.userID, "", 200},
		{http.MethodGet, "/admin/users/" + nobody, "", 404},
		// A malformed id names nothing: 404, as docs/admin.md says.
		{http.MethodGet, "/admin/users/not-an-id", "", 404},
		{http.MethodPatch, "/admin/users/not-an-id", `{"active":true}`, 404},
		{http.MethodDelete, "/admin/sessions/not-an-id", "", 404},
		{http.MethodPatch, "/admin/users/" + st.userID, `{"active":true,"admin":false}`, 200},
		{http.MethodPut, "/admin/users/" + st.userID + "/password", `{"password":"` + oasPassword + `"}`, 204},
		{http.MethodGet, "/admin/users/" + st.userID + "/sessions", "", 200},
		{http.MethodDelete, "/admin/users/" + st.userID + "/sessions", "", 204},
		{http.MethodDelete, "/admin/sessions/" + nobody, "", 404},
		{http.MethodGet, "/admin/audit?limit=2", "", 200},
		{http.MethodGet, "/admin/audit?type=nope", "", 400},
		{http.MethodGet, "/admin/audit?type=", "", 400},
		{http.MethodGet, "/admin/audit?type=logout&user=&address=&since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00.5%2B01:00", "", 200},
		{http.MethodGet, "/admin/audit?user=" + strings.Repeat("x", 1025), "", 400},
		// since and until are date-times of the list query language
		// (docs/admin.md, "Audit trail"): neither a date that is in 1 BC
		// in UTC, nor a comma before the fraction, nor a one-digit hour.
		{http.MethodGet, "/admin/audit?since=0001-01-01T00:00:00%2B23:59", "", 400},
		{http.MethodGet, "/admin/audit?until=2026-01-01T00:00:00,5Z", "", 400},
		{http.MethodGet, "/admin/audit?since=2026-01-01T0:00:00Z", "", 400},
		{http.MethodGet, "/admin/keys", "", 200},
		{http.MethodPost, "/admin/keys/rotate", `{"now":false}`, 201},
		{http.MethodPost, "/admin/keys/nope/revoke", "", 404},
		{http.MethodGet, "/admin/cache/user?page=1", "", 200},
		{http.MethodGet, "/admin/cache/user", "", 200},
		{http.MethodGet, "/auth/sessions", "", 200},
		{http.MethodDelete, "/auth/sessions/" + nobody, "", 404},
		{http.MethodPost, "/auth/password", `{"currentPassword":"wrong password!","newPassword":"another password"}`, 401},
		{http.MethodPost, "/auth/password", `{"currentPassword":"` + oasPassword + `","newPassword":"` + oasPassword + `"}`, 204},
		{http.MethodDelete, "/admin/users/" + st.userID, "", 204},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		x := oasSend(t, c.method, ts.URL+c.path, "application/json", body, auth...)
		if x.status != c.status {
			t.Errorf("%s %s: %d, want %d (%.200s)", c.method, c.path, x.status, c.status, x.body)
			continue
		}
		check.checkResponse(t, x)
	}
}
