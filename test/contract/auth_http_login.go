package contract

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ahLoginTests: POST /auth/login answers 201 with a pair, one identical
// 401 for every credential problem, 400 for a malformed body and 415 for
// another media type.
func ahLoginTests(t *testing.T, s *ahSuite) {
	t.Run("a login answers 201 with a well-formed token pair", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		s.wantAccepted(t, p.Access, "the new access token")
		q := s.login(t, u)
		if p.Access == q.Access || p.Refresh == q.Refresh {
			t.Error("two logins answered the same tokens")
		}
	})

	t.Run("usernames match whatever their case", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		s.wantPair(t, s.tryLogin(t, strings.ToUpper(u.Name), u.Password), u.ID)
	})

	t.Run("every credential problem is the same 401", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		off := s.user(t, false)
		uf, pf := s.cfg.UsernameField, s.cfg.PasswordField
		cases := []struct {
			name string
			body string
		}{
			{"a wrong password", string(s.loginBody(u.Name, u.Password+"x"))},
			{"a password differing in case", string(s.loginBody(u.Name, strings.ToUpper(u.Password)))},
			{"an unknown user", string(s.loginBody("nobody-"+ahRandom(4), u.Password))},
			{"an inactive user with the right password", string(s.loginBody(off.Name, off.Password))},
			{"an empty username", string(s.loginBody("", u.Password))},
			{"an empty password", string(s.loginBody(u.Name, ""))},
			{"a missing username", `{"` + pf + `":"` + u.Password + `"}`},
			{"a missing password", `{"` + uf + `":"` + u.Name + `"}`},
			{"a null password", `{"` + uf + `":"` + u.Name + `","` + pf + `":null}`},
			{"an empty object", `{}`},
		}
		var first []byte
		for _, c := range cases {
			r := s.web.do(t, http.MethodPost, "/auth/login", []byte(c.body))
			if r.Status != http.StatusUnauthorized {
				t.Errorf("%s: status %d, want 401: %s", c.name, r.Status, ahShow(r))
				continue
			}
			ahWantUnauthorized(t, r, false)
			if first == nil {
				first = r.Body
			} else if !bytes.Equal(first, r.Body) {
				t.Errorf("%s: body %s differs from %s: the answer tells the cases apart", c.name, ahShow(r), ahShowBody(first))
			}
		}
	})

	t.Run("a malformed login body is 400 naming the field", func(t *testing.T) {
		t.Parallel()
		uf, pf := s.cfg.UsernameField, s.cfg.PasswordField
		for _, c := range []struct {
			name, body, field string
		}{
			{"a number username", `{"` + uf + `":42,"` + pf + `":"secret-secret"}`, uf},
			{"an object password", `{"` + uf + `":"alice","` + pf + `":{"x":1}}`, pf},
			{"an array password", `{"` + uf + `":"alice","` + pf + `":["a"]}`, pf},
			{"a boolean username", `{"` + uf + `":true,"` + pf + `":"secret-secret"}`, uf},
			{"an unknown field", `{"` + uf + `":"alice","` + pf + `":"secret-secret","remember":true}`, "remember"},
		} {
			r := s.web.do(t, http.MethodPost, "/auth/login", []byte(c.body))
			if r.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400: %s", c.name, r.Status, ahShow(r))
				continue
			}
			r.fail(t, http.StatusBadRequest, "", c.field)
		}
		for _, body := range []string{`[]`, `"alice"`, `{"` + uf + `":"a"`, `{"` + uf + `":"a"}{}`, `{` + uf + `:1}`} {
			r := s.web.do(t, http.MethodPost, "/auth/login", []byte(body))
			if r.Status != http.StatusBadRequest {
				t.Errorf("body %s: status %d, want 400", body, r.Status)
				continue
			}
			webParseEnvelope(t, r)
		}
	})

	t.Run("a login body that is not JSON is 415", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
			r := s.web.do(t, http.MethodPost, "/auth/login", s.loginBody(u.Name, u.Password), "Content-Type", ct)
			if r.Status != http.StatusUnsupportedMediaType {
				t.Errorf("Content-Type %s: status %d, want 415", ct, r.Status)
				continue
			}
			webParseEnvelope(t, r)
		}
		r := s.web.do(t, http.MethodPost, "/auth/login", []byte("username=a&password=b"), "Content-Type", "")
		if r.Status != http.StatusUnsupportedMediaType {
			t.Errorf("no Content-Type: status %d, want 415", r.Status)
		}
	})

	t.Run("login answers only POST", func(t *testing.T) {
		t.Parallel()
		r := s.web.do(t, http.MethodGet, "/auth/login", nil)
		if r.Status != http.StatusMethodNotAllowed && r.Status != http.StatusNotFound {
			t.Errorf("GET /auth/login answered %d, want 405 or 404", r.Status)
		}
	})
}

// ahThrottleTests: failed logins are throttled per username (the main
// service's limit is 3) with 429 and Retry-After, even for the right
// password, and a success resets the count.
func ahThrottleTests(t *testing.T, s *ahSuite) {
	limit := s.cfg.UsernameLimit
	t.Run("failures for one username are throttled with 429 and Retry-After", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		other := s.user(t, true)
		for i := range limit {
			if r := s.tryLogin(t, u.Name, "wrong-"+ahRandom(4)); r.Status != http.StatusUnauthorized {
				t.Fatalf("failure %d answered %d, want 401", i+1, r.Status)
			}
		}
		for _, c := range []struct{ name, username, password string }{
			{"the right password", u.Name, u.Password},
			{"a wrong password", u.Name, "wrong"},
			{"the username in another case", strings.ToUpper(u.Name), u.Password},
		} {
			r := s.tryLogin(t, c.username, c.password)
			ahWantThrottled(t, r, c.name, s.cfg.ThrottleWindow)
		}
		s.login(t, other)
	})

	t.Run("failures for an unknown username are throttled too", func(t *testing.T) {
		t.Parallel()
		ghost := "ghost-" + ahRandom(4)
		for range limit {
			s.tryLogin(t, ghost, "wrong-password")
		}
		ahWantThrottled(t, s.tryLogin(t, ghost, "wrong-password"), "an unknown username", s.cfg.ThrottleWindow)
	})

	t.Run("a successful login resets the username's failures", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		for round := range 3 {
			for i := 0; i < limit-1; i++ {
				if r := s.tryLogin(t, u.Name, "wrong"); r.Status != http.StatusUnauthorized {
					t.Fatalf("round %d failure %d answered %d, want 401", round, i+1, r.Status)
				}
			}
			s.login(t, u)
		}
	})
}

// ahWantThrottled checks a 429 answer with a Retry-After of whole seconds
// within the window.
func ahWantThrottled(t *testing.T, r webReply, what string, window time.Duration) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		t.Errorf("%s: status %d, want 429: %s", what, r.Status, ahShow(r))
		return
	}
	webParseEnvelope(t, r)
	ra := r.Header.Get("Retry-After")
	secs, err := strconv.Atoi(ra)
	if err != nil || secs <= 0 || time.Duration(secs)*time.Second > window+time.Second {
		t.Errorf("%s: Retry-After %q, want whole seconds in (0, %v]", what, ra, window)
	}
}

// ahConfiguredServiceTests start services of their own: custom login
// field names with one-second access tokens, and a small per-address
// limit.
func ahConfiguredServiceTests(t *testing.T, h AuthHTTPHarness) {
	t.Run("login field names are configurable and access tokens expire", func(t *testing.T) {
		t.Parallel()
		s := newAHSuite(t, h, AuthHTTPConfig{UsernameLimit: 3, AddressLimit: 1000, ThrottleWindow: time.Minute,
			UsernameField: "email", PasswordField: "secret", AccessTTL: time.Second})
		u := s.user(t, true)
		p := s.login(t, u)
		body := []byte(`{"username":"` + u.Name + `","password":"` + u.Password + `"}`)
		if r := s.web.do(t, http.MethodPost, "/auth/login", body); r.Status != http.StatusBadRequest {
			t.Errorf("a login with the default field names answered %d, want 400", r.Status)
		} else {
			r.fail(t, http.StatusBadRequest, "", "username", "password")
		}

		// The token lives one second; with at most 5 s of leeway it must
		// be refused within a few more. The bound only stops a hang.
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := s.probe(t, p.Access)
			if r.Status == http.StatusUnauthorized {
				ahWantUnauthorized(t, r, true)
				break
			}
			if r.Status != http.StatusOK {
				t.Fatalf("the access token answered %d, want 200 until it expires, then 401", r.Status)
			}
			if time.Now().After(deadline) {
				t.Fatal("an access token of one second was still accepted 20 s after its issue")
			}
			time.Sleep(250 * time.Millisecond)
		}
		// Its refresh token still works, for a fresh access token.
		q := s.refresh(t, p.Refresh, u.ID)
		s.wantAccepted(t, q.Access, "the access token of a refresh after expiry")
	})

	t.Run("failures from one address are throttled across usernames", func(t *testing.T) {
		t.Parallel()
		const perAddress = 4
		s := newAHSuite(t, h, AuthHTTPConfig{UsernameLimit: 100, AddressLimit: perAddress, ThrottleWindow: time.Hour})
		u := s.user(t, true)
		for i := 0; i < perAddress-1; i++ {
			if r := s.tryLogin(t, "ghost-"+ahRandom(4), "wrong-password"); r.Status != http.StatusUnauthorized {
				t.Fatalf("failure %d answered %d, want 401", i+1, r.Status)
			}
		}
		s.login(t, u) // below the limit, other usernames are unaffected
		s.tryLogin(t, "ghost-"+ahRandom(4), "wrong-password")
		ahWantThrottled(t, s.tryLogin(t, u.Name, u.Password), "the right password from a throttled address", time.Hour)
	})
}
