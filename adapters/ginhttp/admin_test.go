package ginhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/ports"
)

// Every /admin route the router mounts, whatever list it came from,
// answers 401 to an anonymous caller and 403 FORBIDDEN with
// Cache-Control: no-store to a signed-in user who is not an admin.
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
			if x := oasSend(t, r.Method, ts.URL+path, "application/json", []byte(`{}`)); x.status != http.StatusUnauthorized {
				t.Errorf("anonymous: %d, want 401", x.status)
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
	mem, refresh := memstore.NewUserRepository(), memstore.NewRefreshStore()
	mem.SetRefreshStore(refresh)
	users := plainUsers{mem}
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := josejwt.New(ctx, josejwt.Options{Keys: memstore.NewKeyStore(), Clock: clock})
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
	authn, err := application.NewAuthenticate(tokens.Verifier(), nil, lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	ua, err := application.NewUserAdmin(users, hasher, clock, ids)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ua.Add(ctx, application.AddUserInput{Username: "root", Password: oasPassword, Active: true, Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := ua.Add(ctx, application.AddUserInput{Username: "other", Password: oasPassword, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	check, err := application.NewAdminCheck(users, clock)
	if err != nil {
		t.Fatal(err)
	}
	au, err := application.NewAdminUsers(ua, check, refresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Authenticator: oasAuth{authn}, EnableGuards: true, Auth: &AuthOptions{Login: login},
		Admin: &AdminOptions{Check: check, Users: au}})
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
