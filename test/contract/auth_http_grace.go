package contract

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// ahReuseGraceTests: POST /token/refresh is POST /auth/refresh under the
// route Rockets serves, and the reuse grace of docs/api.md, "Authentication"
// (on by default) answers a second presentation of a just-used refresh
// token with the family's one live refresh token; after the window, reuse
// revokes the family.
func ahReuseGraceTests(t *testing.T, h AuthHTTPHarness) {
	t.Run("with the default grace", func(t *testing.T) {
		t.Parallel()
		s := newAHSuite(t, h, AuthHTTPConfig{UsernameLimit: 3, AddressLimit: 10000, ThrottleWindow: time.Minute})

		t.Run("POST /token/refresh rotates like POST /auth/refresh, and the two share one token state", func(t *testing.T) {
			t.Parallel()
			u := s.user(t, true)
			p := s.login(t, u)
			q := s.wantPair(t, s.tryRefreshAt(t, "/token/refresh", p.Refresh), u.ID)
			s.wantAccepted(t, q.Access, "the access token from /token/refresh")
			r := s.wantPair(t, s.tryRefreshAt(t, "/auth/refresh", q.Refresh), u.ID)
			if ahClaim(t, r.Refresh, "jti") == ahClaim(t, q.Refresh, "jti") {
				t.Error("/auth/refresh did not rotate the token /token/refresh issued")
			}
			// The token /token/refresh consumed, presented again on the other route within grace, gets r's refresh token.
			again := s.wantPair(t, s.tryRefreshAt(t, "/auth/refresh", p.Refresh), u.ID)
			if ahClaim(t, again.Refresh, "jti") != ahClaim(t, r.Refresh, "jti") {
				t.Error("a retry within grace did not get the family's live refresh token")
			}
			for _, c := range []struct{ name, body string }{
				{"garbage", `{"refreshToken":"garbage"}`},
				{"no token", `{}`},
			} {
				ahWantUnauthorized(t, s.web.do(t, http.MethodPost, "/token/refresh", []byte(c.body)), false)
			}
			if r := s.web.do(t, http.MethodPost, "/token/refresh", []byte(`{"refreshToken":1}`)); r.Status != http.StatusBadRequest {
				t.Errorf("a number token on /token/refresh answered %d, want 400", r.Status)
			}
		})

		t.Run("of 20 concurrent refreshes with one token all answer 201 with one refresh token, which then works", func(t *testing.T) {
			t.Parallel()
			u := s.user(t, true)
			p := s.login(t, u)
			b, _ := json.Marshal(map[string]string{"refreshToken": p.Refresh})
			const n = 20
			outcomes := ahRace(n, func() (int, []byte, error) {
				return ahPost(s.web.client, s.target.BaseURL+"/auth/refresh", b)
			})
			jtis := map[string]bool{}
			var live ahPair
			for i, o := range outcomes {
				if o.err != nil || o.status != http.StatusCreated {
					t.Errorf("request %d answered %d (%v), want 201", i, o.status, o.err)
					continue
				}
				var pair struct{ AccessToken, RefreshToken string }
				if err := json.Unmarshal(o.body, &pair); err != nil || pair.RefreshToken == "" || pair.AccessToken == "" {
					t.Errorf("request %d: 201 without a pair", i)
					continue
				}
				jtis[ahClaim(t, pair.RefreshToken, "jti")] = true
				live = ahPair{Access: pair.AccessToken, Refresh: pair.RefreshToken}
				s.wantAccepted(t, pair.AccessToken, "an access token of a concurrent refresh")
			}
			if len(jtis) != 1 {
				t.Fatalf("the concurrent refreshes handed out %d distinct refresh tokens, want 1: the family branched", len(jtis))
			}
			next := s.refresh(t, live.Refresh, u.ID)
			s.wantAccepted(t, next.Access, "the access token after refreshing the one live token")
		})
	})

	t.Run("after a short grace window", func(t *testing.T) {
		t.Parallel()
		const grace = 2 * time.Second
		s := newAHSuite(t, h, AuthHTTPConfig{UsernameLimit: 3, AddressLimit: 10000, ThrottleWindow: time.Minute, ReuseGrace: grace})
		u := s.user(t, true)
		p := s.login(t, u)
		other := s.login(t, u)
		q := s.refresh(t, p.Refresh, u.ID)
		if r := s.refresh(t, p.Refresh, u.ID); ahClaim(t, r.Refresh, "jti") != ahClaim(t, q.Refresh, "jti") {
			t.Error("a retry within grace got a refresh token other than the live one")
		}
		time.Sleep(grace + 500*time.Millisecond)
		ahWantUnauthorized(t, s.tryRefreshAt(t, "/token/refresh", p.Refresh), false)
		if r := s.tryRefresh(t, q.Refresh); r.Status != http.StatusUnauthorized {
			t.Errorf("the live token after a reuse past the window answered %d, want 401: the family was not revoked", r.Status)
		}
		s.refresh(t, other.Refresh, u.ID)
	})
}

// ahClaim returns a string claim of a token, without checking it.
func ahClaim(t *testing.T, token, name string) string {
	t.Helper()
	_, c := ahDecode(t, token)
	v, _ := c[name].(string)
	if v == "" {
		t.Fatalf("the token has no %s claim", name)
	}
	return v
}
