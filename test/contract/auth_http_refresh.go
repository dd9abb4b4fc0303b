package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// ahRefreshTests: POST /auth/refresh rotates refresh tokens, detects
// reuse, refuses anything but a live refresh token, and lets one of many
// concurrent uses win.
func ahRefreshTests(t *testing.T, s *ahSuite) {
	t.Run("a refresh answers 201 with a new pair", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		q := s.refresh(t, p.Refresh, u.ID)
		if q.Access == p.Access || q.Refresh == p.Refresh {
			t.Error("the refresh answered a token of the previous pair")
		}
		s.wantAccepted(t, q.Access, "the refreshed access token")
		r := s.refresh(t, q.Refresh, u.ID)
		s.wantAccepted(t, r.Access, "the access token of a second refresh")
	})

	t.Run("a reused refresh token is 401 and revokes its whole family", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		other := s.login(t, u) // another family of the same user
		q := s.refresh(t, p.Refresh, u.ID)
		ahWantUnauthorized(t, s.tryRefresh(t, p.Refresh), false)
		ended := time.Now()
		s.wantEnded(t, ended, p.Access, "the first access token of a family revoked on reuse")
		s.wantEnded(t, ended, q.Access, "the latest access token of a family revoked on reuse")
		s.wantAccepted(t, other.Access, "the access token of another family")
		if r := s.tryRefresh(t, q.Refresh); r.Status != http.StatusUnauthorized {
			t.Errorf("the successor of a reused token answered %d, want 401: the family was not revoked", r.Status)
		}
		if r := s.tryRefresh(t, p.Refresh); r.Status != http.StatusUnauthorized {
			t.Errorf("a third use of the token answered %d, want 401", r.Status)
		}
		s.refresh(t, other.Refresh, u.ID)
	})

	t.Run("anything but a live refresh token is refused", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		parts := bytes.Split([]byte(p.Refresh), []byte("."))
		tampered := string(parts[0]) + "." + string(parts[1]) + "." + ahFlip(string(parts[2]))
		for _, c := range []struct{ name, body string }{
			{"an access token", `{"refreshToken":"` + p.Access + `"}`},
			{"a tampered refresh token", `{"refreshToken":"` + tampered + `"}`},
			{"garbage", `{"refreshToken":"garbage"}`},
			{"three segments of garbage", `{"refreshToken":"a.b.c"}`},
			{"an empty token", `{"refreshToken":""}`},
			{"a null token", `{"refreshToken":null}`},
			{"no token", `{}`},
		} {
			r := s.web.do(t, http.MethodPost, "/auth/refresh", []byte(c.body))
			if r.Status != http.StatusUnauthorized {
				t.Errorf("%s: status %d, want 401", c.name, r.Status)
				continue
			}
			ahWantUnauthorized(t, r, false)
		}
		// No body at all is a missing token too, on both refresh routes,
		// with or without a JSON Content-Type (as Rockets answers).
		for _, path := range []string{"/auth/refresh", "/token/refresh"} {
			for _, hdr := range [][]string{nil, {"Content-Type", "application/json"}} {
				r := s.web.do(t, http.MethodPost, path, nil, hdr...)
				if r.Status != http.StatusUnauthorized {
					t.Errorf("%s with no body (headers %q): status %d, want 401", path, hdr, r.Status)
					continue
				}
				ahWantUnauthorized(t, r, false)
			}
		}
		for _, c := range []struct{ name, body, field string }{
			{"a number token", `{"refreshToken":123}`, "refreshToken"},
			{"an object token", `{"refreshToken":{"t":"x"}}`, "refreshToken"},
			{"an unknown field", `{"refreshToken":"x","accessToken":"y"}`, "accessToken"},
		} {
			r := s.web.do(t, http.MethodPost, "/auth/refresh", []byte(c.body))
			if r.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", c.name, r.Status)
				continue
			}
			r.fail(t, http.StatusBadRequest, "", c.field)
		}
		r := s.web.do(t, http.MethodPost, "/auth/refresh", []byte(`{"refreshToken":"x"}`), "Content-Type", "text/plain")
		if r.Status != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Type text/plain: status %d, want 415", r.Status)
		}
		// None of the refusals consumed the genuine token.
		s.refresh(t, p.Refresh, u.ID)
	})

	t.Run("of 20 concurrent refreshes with one token exactly one succeeds", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		b, _ := json.Marshal(map[string]string{"refreshToken": p.Refresh})
		const n = 20
		statuses := ahRace(n, func() (int, []byte, error) {
			return ahPost(s.web.client, s.target.BaseURL+"/auth/refresh", b)
		})
		won := 0
		for i, st := range statuses {
			switch {
			case st.err != nil:
				t.Errorf("request %d: %v", i, st.err)
			case st.status == http.StatusCreated:
				won++
				var pair map[string]any
				if err := json.Unmarshal(st.body, &pair); err != nil || pair["refreshToken"] == nil {
					t.Errorf("request %d: 201 without a pair", i)
				}
			case st.status != http.StatusUnauthorized:
				t.Errorf("request %d answered %d, want 201 or 401", i, st.status)
			}
		}
		if won != 1 {
			t.Errorf("%d of %d concurrent refreshes with one token succeeded, want exactly 1", won, n)
		}
	})

	t.Run("a disabled user can neither refresh nor log in, and its access token stops working", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		s.wantAccepted(t, p.Access, "the access token before disabling")
		s.target.DisableUser(t, u.Name)
		ended := time.Now()
		ahWantUnauthorized(t, s.tryRefresh(t, p.Refresh), false)
		ahWantUnauthorized(t, s.tryLogin(t, u.Name, u.Password), false)
		s.wantEnded(t, ended, p.Access, "a disabled user's access token")
		// The guard may remember the user for SubjectCacheTTL; the bound
		// only stops a hang.
		deadline := time.Now().Add(s.target.SubjectCacheTTL + 10*time.Second)
		for {
			r := s.probe(t, p.Access)
			if r.Status == http.StatusUnauthorized {
				ahWantUnauthorized(t, r, true)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a disabled user's access token still answers %d %v after disabling", r.Status, s.target.SubjectCacheTTL+10*time.Second)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// ahLogoutTests: POST /auth/logout revokes the caller's refresh family and
// nothing else.
func ahLogoutTests(t *testing.T, s *ahSuite) {
	t.Run("logout answers 204 and revokes the caller's family only", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		other := s.login(t, u)
		q := s.refresh(t, p.Refresh, u.ID) // q is of p's family
		r := s.web.do(t, http.MethodPost, "/auth/logout", nil, "Authorization", "Bearer "+p.Access)
		if r.Status != http.StatusNoContent || len(r.Body) != 0 {
			t.Fatalf("logout: status %d with %d bytes, want 204 and no body", r.Status, len(r.Body))
		}
		ended := time.Now()
		ahWantUnauthorized(t, s.tryRefresh(t, q.Refresh), false)
		ahWantUnauthorized(t, s.tryRefresh(t, p.Refresh), false)
		// The session's access tokens end with it (docs/api.md, "Authentication"),
		// so logging out again with one is 401.
		s.wantEnded(t, ended, p.Access, "the access token that logged out")
		s.wantEnded(t, ended, q.Access, "another access token of the logged-out family")
		r = s.web.do(t, http.MethodPost, "/auth/logout", nil, "Authorization", "Bearer "+p.Access)
		ahWantUnauthorized(t, r, true)
		s.wantAccepted(t, other.Access, "the access token of another session")
		s.refresh(t, other.Refresh, u.ID)
	})

	t.Run("a password change ends every session of the user", func(t *testing.T) {
		if s.target.SetPassword == nil {
			t.Skip("the target cannot change passwords")
		}
		t.Parallel()
		u := s.user(t, true)
		p, other := s.login(t, u), s.login(t, u)
		v := s.user(t, true)
		bystander := s.login(t, v)
		s.target.SetPassword(t, u.Name, u.Password+" changed")
		ended := time.Now()
		s.wantEnded(t, ended, p.Access, "an access token from before the password change")
		s.wantEnded(t, ended, other.Access, "another session's access token from before the password change")
		ahWantUnauthorized(t, s.tryRefresh(t, p.Refresh), false)
		s.wantAccepted(t, bystander.Access, "another user's access token")
	})

	t.Run("logout with a refresh token as the bearer is 401 and revokes nothing", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		r := s.web.do(t, http.MethodPost, "/auth/logout", nil, "Authorization", "Bearer "+p.Refresh)
		ahWantUnauthorized(t, r, true)
		s.refresh(t, p.Refresh, u.ID)
	})
}

// ahRotationTests: after a key rotation new tokens carry the new kid,
// tokens signed before keep working, and the JWKS lists both keys.
func ahRotationTests(t *testing.T, s *ahSuite) {
	t.Run("key rotation keeps tokens in flight valid", func(t *testing.T) {
		if s.target.Rotate == nil {
			t.Skip("the harness cannot rotate keys")
		}
		u := s.user(t, true)
		before := s.login(t, u)
		oldKid := ahKid(t, before.Access)
		s.target.Rotate(t)
		after := s.login(t, u)
		newKid := ahKid(t, after.Access)
		if newKid == oldKid {
			t.Fatalf("a login after the rotation signs with the old kid %q", oldKid)
		}
		if k := ahKid(t, after.Refresh); k != newKid {
			t.Errorf("the new refresh token has kid %q, want %q", k, newKid)
		}
		s.wantAccepted(t, after.Access, "a token signed with the new key")
		s.wantAccepted(t, before.Access, "a token signed before the rotation")
		keys := s.jwks(t)
		for _, kid := range []string{oldKid, newKid} {
			if ahJWKByKid(keys, kid) == nil {
				t.Errorf("the JWKS does not list kid %q after the rotation (%d keys)", kid, len(keys))
			}
		}
		q := s.refresh(t, before.Refresh, u.ID)
		if k := ahKid(t, q.Access); k != newKid {
			t.Errorf("refreshing an old pair signs with kid %q, want the new %q", k, newKid)
		}
		s.wantAccepted(t, before.Access, "a token signed before the rotation, after a refresh")
	})
}

// ahOutcome is one answer of a race.
type ahOutcome struct {
	status int
	body   []byte
	err    error
}

// ahRace runs n calls at once: every goroutine is ready before any sends.
func ahRace(n int, do func() (int, []byte, error)) []ahOutcome {
	out := make([]ahOutcome, n)
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	for i := range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			out[i].status, out[i].body, out[i].err = do()
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return out
}

// ahPost posts a JSON body; safe to call from any goroutine.
func ahPost(c *http.Client, url string, body []byte) (int, []byte, error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, b, nil
}

// sessionEndBound is how soon after a session ends its access tokens must
// be refused: docs/api.md ("Authentication") allows one second, and the test's own
// requests get half a second more.
const sessionEndBound = 1500 * time.Millisecond

// wantEnded fails t unless token is refused (401 with WWW-Authenticate)
// within sessionEndBound of ended.
func (s *ahSuite) wantEnded(t *testing.T, ended time.Time, token, what string) {
	t.Helper()
	for {
		r := s.probe(t, token)
		if r.Status == http.StatusUnauthorized {
			ahWantUnauthorized(t, r, true)
			return
		}
		if time.Since(ended) > sessionEndBound {
			t.Fatalf("%s still answers %d %v after its session ended", what, r.Status, sessionEndBound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
