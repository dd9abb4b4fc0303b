package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/contract"
)

// Issue 5: `cachegate keys rotate` while tokens are in flight. A running
// server re-reads its keys lazily (every minute, or when a token names a
// kid it does not know), so the test brings the new key to it the way
// production does: a replica started after the rotation signs with the new
// key, and its token, shown to the first server, makes that one reload.
// Nobody is logged out on the way.
func TestKeysRotateWhileTokensAreInFlight(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100}
			first := newAuthBinary(t, db, cfg)
			const password = "rotation-password-1"
			first.addUser(t, "rita", password, true)
			login := func(t *testing.T, s *server) pair {
				t.Helper()
				return loginAt(t, first.client, s.URL, "rita", password)
			}
			before := login(t, first.srv)
			oldKid := jwtKid(t, before.Access)

			newKid := first.rotate(t)
			if newKid == oldKid {
				t.Fatalf("keys rotate printed the current kid %s", oldKid)
			}
			second := startServer(t, serverConfig{Dir: first.dir, Args: authArgs(first.dbURL, cfg)})
			fromSecond := login(t, second)
			if k := jwtKid(t, fromSecond.Access); k != newKid {
				t.Fatalf("a replica started after the rotation signs with kid %s, want %s", k, newKid)
			}
			// The first server has not reloaded yet; a token with the new
			// kid makes it. Such reloads happen at most once a second, so
			// within a second of the last one (the server's start, here)
			// the token may still be refused; the bound only stops a hang.
			deadline := time.Now().Add(10 * time.Second)
			for {
				r := mustSend(t, first.client, http.MethodGet, first.srv.URL+"/cache/user", nil,
					"Authorization", "Bearer "+fromSecond.Access)
				if r.Status == http.StatusOK {
					break
				}
				if r.Status != http.StatusUnauthorized || time.Now().After(deadline) {
					t.Fatalf("the replica's token answers %d on the first server, want 200", r.Status)
				}
				time.Sleep(200 * time.Millisecond)
			}
			after := login(t, first.srv)
			if k := jwtKid(t, after.Access); k != newKid {
				t.Errorf("the first server signs with kid %s after seeing the new key, want %s", k, newKid)
			}
			for _, s := range []*server{first.srv, second} {
				sv := &authBinary{srv: s, client: first.client}
				wantOpen(t, sv, before.Access, "a token signed before the rotation")
				wantOpen(t, sv, after.Access, "a token signed after the rotation")
				kids := jwksKids(t, first.client, s.URL)
				for _, k := range []string{oldKid, newKid} {
					if !strings.Contains(kids, `"`+k+`"`) {
						t.Errorf("the JWKS of %s lists %s, not %s", s.URL, kids, k)
					}
				}
			}
			// A refresh token signed before the rotation still refreshes,
			// and its new pair carries the new kid.
			r := mustSend(t, first.client, http.MethodPost, second.URL+"/auth/refresh",
				[]byte(`{"refreshToken":"`+before.Refresh+`"}`))
			if r.Status != http.StatusCreated {
				t.Fatalf("refreshing a pair from before the rotation answered %d", r.Status)
			}
			var q pair
			if err := json.Unmarshal(r.Body, &q); err != nil {
				t.Fatal(err)
			}
			if k := jwtKid(t, q.Access); k != newKid {
				t.Errorf("the refreshed pair has kid %s, want %s", k, newKid)
			}
		})
	}
}

// pair is a token pair as login and refresh answer it.
type pair struct {
	Access  string `json:"accessToken"`
	Refresh string `json:"refreshToken"`
}

// loginAt logs in at base and returns the pair; it must succeed.
func loginAt(t *testing.T, c *http.Client, base, username, password string) pair {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"username": username, "password": password})
	r := mustSend(t, c, http.MethodPost, base+"/auth/login", b)
	if r.Status != http.StatusCreated {
		t.Fatalf("login at %s answered %d", base, r.Status)
	}
	var p pair
	if err := json.Unmarshal(r.Body, &p); err != nil || p.Access == "" || p.Refresh == "" {
		t.Fatalf("login answered no pair: %v", err)
	}
	return p
}

// wantOpen checks that token opens the guarded /cache/user of b.
func wantOpen(t *testing.T, b *authBinary, token, what string) {
	t.Helper()
	r := mustSend(t, b.client, http.MethodGet, b.srv.URL+"/cache/user", nil, "Authorization", "Bearer "+token)
	if r.Status != http.StatusOK {
		t.Errorf("%s: GET %s/cache/user answered %d, want 200", what, b.srv.URL, r.Status)
	}
}

// jwtKid returns the kid header of a token, never printing the token.
func jwtKid(t *testing.T, token string) string {
	t.Helper()
	seg, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(seg)
	var h struct {
		Kid string `json:"kid"`
	}
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	if err != nil || h.Kid == "" {
		t.Fatalf("a token of %d bytes has no readable kid header: %v", len(token), err)
	}
	return h.Kid
}

// jwksKids returns the kids the JWKS at base lists, as a JSON array.
func jwksKids(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	r := mustSend(t, c, http.MethodGet, base+"/.well-known/jwks.json", nil).want(t, http.StatusOK)
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(r.Body, &set); err != nil {
		t.Fatalf("the JWKS is not JSON: %v", err)
	}
	kids := make([]string, len(set.Keys))
	for i, k := range set.Keys {
		kids[i] = k.Kid
	}
	b, _ := json.Marshal(kids)
	return string(b)
}
