package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// AuthHTTPConfig is what the authentication suite asks of a service. The
// harness starts one service per call, configured so, with guards enabled,
// the default assignment "user" under policy owner, the default issuer and
// audience ("cachegate"), the default refresh token lifetime (30 days),
// the body field refreshToken for refresh, and an empty user store.
type AuthHTTPConfig struct {
	// UsernameLimit and AddressLimit are the failed-login limits per
	// username and per client address within ThrottleWindow. The suite
	// always sets both above zero.
	UsernameLimit int
	AddressLimit  int
	// ThrottleWindow is the window of the limits; the suite always sets it.
	ThrottleWindow time.Duration
	// UsernameField and PasswordField name the login body's members;
	// empty means the defaults "username" and "password".
	UsernameField string
	PasswordField string
	// AccessTTL is the access token lifetime; zero means the default of
	// 15 minutes.
	AccessTTL time.Duration
	// ReuseGrace is auth.refreshReuseGrace: zero means the service's
	// default (10 s, README "Configuration"), negative turns grace off (0).
	ReuseGrace time.Duration
}

// AuthHTTPTarget is one running service the authentication suite talks to.
type AuthHTTPTarget struct {
	// BaseURL is the service's root without a trailing slash.
	BaseURL string
	// Assignment names an assignment with policy owner; empty means "user".
	Assignment string
	// AddUser creates a local user as `cachegate users add` does and
	// returns its id. The suite gives passwords of at least 16 bytes.
	AddUser func(t *testing.T, username, password string, active bool) (id string)
	// DisableUser disables a user as `cachegate users disable` does.
	DisableUser func(t *testing.T, username string)
	// SetPassword changes a user's password as `cachegate users
	// set-password` does. Nil skips the test of sessions ending with it.
	SetPassword func(t *testing.T, username, password string)
	// SubjectCacheTTL is how long the guard may still let a disabled
	// user's access token in; zero means one second.
	SubjectCacheTTL time.Duration
	// Rotate makes a new signing key current as `cachegate keys rotate --now`
	// does, and returns once the service signs new tokens with it. Nil
	// skips the key rotation test (and must be nil in HS256 mode).
	Rotate func(t *testing.T)
	// SigningKey returns the service's current signing key (an EdDSA key
	// with its Ed25519 seed in Private, or in HS256 mode the secret with
	// Algorithm "HS256" and any ID), so the suite can sign tokens whose
	// claims the service must refuse. Nil skips those tests.
	SigningKey func(t *testing.T) domain.SigningKey
	// ExtraGuarded lists more GET paths that must answer 401 without a
	// token (e.g. "/metrics").
	ExtraGuarded []string
	// Client sends the requests; nil means a plain client with a timeout.
	Client *http.Client
}

// AuthHTTPHarness starts a service configured as c. The suite calls it a
// few times (with different configurations) and shares each service among
// subtests that use users of their own.
type AuthHTTPHarness func(t *testing.T, c AuthHTTPConfig) AuthHTTPTarget

// AuthHTTP runs the HTTP contract of authentication (docs/api.md,
// "Authentication"; issues 4 and 5) against real sockets: login and its failures, the
// guard, forged tokens, the owner policy, refresh rotation and reuse
// detection, logout, disabled users, throttling, the JWKS and key
// rotation.
//
// Decisions where the contract is silent, pinned here: token answers carry
// Cache-Control: no-store (RFC 6749 5.1); usernames are matched
// case-insensitively at login; a login 401 has the same body for every
// credential problem; a missing refreshToken is 401 and a non-string one
// 400; public routes ignore an invalid bearer token rather than refuse it;
// the JWKS never carries private key material.
//
// The suite never prints a token or a password: failures name lengths,
// kids and statuses.
func AuthHTTP(t *testing.T, h AuthHTTPHarness) {
	t.Helper()
	s := newAHSuite(t, h, ahMainConfig)
	t.Run("independent", func(t *testing.T) {
		ahLoginTests(t, s)
		ahGuardTests(t, s)
		ahForgeryTests(t, s)
		ahClaimsTests(t, s)
		ahOwnerTests(t, s)
		ahRefreshTests(t, s)
		ahReuseGraceTests(t, h)
		ahLogoutTests(t, s)
		ahThrottleTests(t, s)
		ahConfiguredServiceTests(t, h)
	})
	// Rotation runs alone, last, so that it is the only key change the
	// service sees while it checks the JWKS.
	ahRotationTests(t, s)
}

// ahMainConfig is the configuration of the suite's main service: three
// failures per username, an address limit no subtest reaches, and no reuse
// grace, so that any reuse revokes at once (ahReuseGraceTests run
// services with grace).
var ahMainConfig = AuthHTTPConfig{UsernameLimit: 3, AddressLimit: 10000, ThrottleWindow: 15 * time.Minute, ReuseGrace: -1}

// ahSuite is one service under test.
type ahSuite struct {
	web    *webSuite
	target AuthHTTPTarget
	cfg    AuthHTTPConfig
}

func newAHSuite(t *testing.T, h AuthHTTPHarness, c AuthHTTPConfig) *ahSuite {
	t.Helper()
	target := h(t, c)
	if target.AddUser == nil || target.DisableUser == nil {
		t.Fatal("the harness must provide AddUser and DisableUser")
	}
	if target.Assignment == "" {
		target.Assignment = "user"
	}
	if target.SubjectCacheTTL == 0 {
		target.SubjectCacheTTL = time.Second
	}
	client := target.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	if c.UsernameField == "" {
		c.UsernameField = "username"
	}
	if c.PasswordField == "" {
		c.PasswordField = "password"
	}
	if c.AccessTTL == 0 {
		c.AccessTTL = 15 * time.Minute
	}
	web := &webSuite{target: CacheHTTPTarget{BaseURL: target.BaseURL}, client: client, a: target.Assignment}
	return &ahSuite{web: web, target: target, cfg: c}
}

// ahUser is a user the suite created.
type ahUser struct {
	ID, Name, Password string
}

// user creates a user with a fresh name and password.
func (s *ahSuite) user(t *testing.T, active bool) ahUser {
	t.Helper()
	u := ahUser{Name: "u" + ahRandom(6), Password: "pw-" + ahRandom(12)}
	u.ID = s.target.AddUser(t, u.Name, u.Password, active)
	if !webUUIDRE.MatchString(strings.ToLower(u.ID)) {
		t.Fatalf("AddUser returned %q, not a UUID", u.ID)
	}
	u.ID = strings.ToLower(u.ID)
	return u
}

// ahPair is a token pair a login or refresh answered.
type ahPair struct {
	Access, Refresh string
}

// loginBody builds a login body with the configured field names.
func (s *ahSuite) loginBody(username, password string) []byte {
	b, _ := json.Marshal(map[string]string{s.cfg.UsernameField: username, s.cfg.PasswordField: password})
	return b
}

// tryLogin posts a login; hdr are extra header name, value pairs.
func (s *ahSuite) tryLogin(t *testing.T, username, password string, hdr ...string) webReply {
	t.Helper()
	return s.web.do(t, http.MethodPost, "/auth/login", s.loginBody(username, password), hdr...)
}

// login logs u in and returns the pair, which must be well formed.
func (s *ahSuite) login(t *testing.T, u ahUser) ahPair {
	t.Helper()
	return s.wantPair(t, s.tryLogin(t, u.Name, u.Password), u.ID)
}

// tryRefresh posts a refresh with the token in the body.
func (s *ahSuite) tryRefresh(t *testing.T, token string) webReply {
	t.Helper()
	return s.tryRefreshAt(t, "/auth/refresh", token)
}

// tryRefreshAt posts a refresh with the token in the body to path, one of
// the two refresh routes.
func (s *ahSuite) tryRefreshAt(t *testing.T, path, token string) webReply {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"refreshToken": token})
	return s.web.do(t, http.MethodPost, path, b)
}

// refresh exchanges a refresh token of the user with id sub for a new pair.
func (s *ahSuite) refresh(t *testing.T, token, sub string) ahPair {
	t.Helper()
	return s.wantPair(t, s.tryRefresh(t, token), sub)
}

// wantPair checks a 201 token answer for the user with id sub: both
// tokens JWTs of the right typ, kid, claims and lifetime, not cacheable.
func (s *ahSuite) wantPair(t *testing.T, r webReply, sub string) ahPair {
	t.Helper()
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d, want 201: %s", r.Status, ahShow(r))
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("Cache-Control %q, want no-store on a token answer", cc)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("the token answer is not a JSON object: %v", err)
	}
	access, ok1 := body["accessToken"].(string)
	refresh, ok2 := body["refreshToken"].(string)
	if !ok1 || !ok2 || access == "" || refresh == "" {
		t.Fatalf("the token answer lacks accessToken or refreshToken strings (members %v)", ahKeys(body))
	}
	if access == refresh {
		t.Error("the access and refresh tokens are the same")
	}
	ah, ac := ahDecode(t, access)
	rh, rc := ahDecode(t, refresh)
	for _, c := range []struct {
		kind   string
		header map[string]any
		claims map[string]any
		typ    string
		ttl    time.Duration
		aud    string
	}{
		// Refresh tokens carry a distinct audience, so that a generic
		// verifier never takes one for an access token (README.md,
		// "Tokens").
		{"access", ah, ac, "at+jwt", s.cfg.AccessTTL, "cachegate"},
		{"refresh", rh, rc, "refresh+jwt", 30 * domain.Day, "cachegate:refresh"},
	} {
		if typ, _ := c.header["typ"].(string); !strings.EqualFold(typ, c.typ) {
			t.Errorf("%s token typ %q, want %q", c.kind, typ, c.typ)
		}
		if alg, _ := c.header["alg"].(string); alg != "EdDSA" && alg != "HS256" {
			t.Errorf("%s token alg %q, want EdDSA or HS256", c.kind, alg)
		}
		if kid, _ := c.header["kid"].(string); kid == "" {
			t.Errorf("%s token has no kid header", c.kind)
		}
		if got, _ := c.claims["sub"].(string); strings.ToLower(got) != sub {
			t.Errorf("%s token sub %q, want the user id %s", c.kind, got, sub)
		}
		if iss, _ := c.claims["iss"].(string); iss != "cachegate" {
			t.Errorf("%s token iss %q, want cachegate", c.kind, iss)
		}
		if !ahAudience(c.claims["aud"], c.aud) || c.kind == "refresh" && ahAudience(c.claims["aud"], "cachegate") {
			t.Errorf("%s token aud %v, want %s", c.kind, c.claims["aud"], c.aud)
		}
		if jti, _ := c.claims["jti"].(string); jti == "" {
			t.Errorf("%s token has no jti", c.kind)
		}
		iat, ok1 := c.claims["iat"].(float64)
		exp, ok2 := c.claims["exp"].(float64)
		if !ok1 || !ok2 {
			t.Errorf("%s token lacks numeric iat and exp", c.kind)
			continue
		}
		if got := time.Duration(exp-iat) * time.Second; got != c.ttl {
			t.Errorf("%s token lives %v (exp - iat), want %v", c.kind, got, c.ttl)
		}
		if now := time.Now(); time.Unix(int64(iat), 0).Sub(now).Abs() > time.Minute {
			t.Errorf("%s token iat is %v away from now", c.kind, time.Unix(int64(iat), 0).Sub(now))
		}
	}
	// RFC 9068 2.2: an access token names its client.
	if id, _ := ac["client_id"].(string); id != "cachegate" {
		t.Errorf("access token client_id %q, want cachegate", id)
	}
	if ac["jti"] == rc["jti"] {
		t.Error("the access and refresh tokens share their jti")
	}
	return ahPair{Access: access, Refresh: refresh}
}

// get sends GET path with the bearer token (none when empty).
func (s *ahSuite) get(t *testing.T, path, token string) webReply {
	t.Helper()
	if token == "" {
		return s.web.do(t, http.MethodGet, path, nil)
	}
	return s.web.do(t, http.MethodGet, path, nil, "Authorization", "Bearer "+token)
}

// probe lists the owner assignment with token: 200 when the token is
// accepted.
func (s *ahSuite) probe(t *testing.T, token string) webReply {
	t.Helper()
	return s.get(t, s.web.coll(), token)
}

// wantAccepted checks that token opens a guarded route.
func (s *ahSuite) wantAccepted(t *testing.T, token, what string) {
	t.Helper()
	if r := s.probe(t, token); r.Status != http.StatusOK {
		t.Errorf("%s: GET %s answered %d, want 200: %s", what, s.web.coll(), r.Status, ahShow(r))
	}
}

// wantRefused checks that token is refused on a guarded route with 401.
func (s *ahSuite) wantRefused(t *testing.T, token, what string) {
	t.Helper()
	r := s.probe(t, token)
	if r.Status != http.StatusUnauthorized {
		t.Errorf("%s (token of %d bytes): GET %s answered %d, want 401", what, len(token), s.web.coll(), r.Status)
		return
	}
	ahWantUnauthorized(t, r, true)
}

// ahWantUnauthorized checks a 401 answer: the envelope with message
// "Unauthorized" and, when bearer, the WWW-Authenticate challenge.
func ahWantUnauthorized(t *testing.T, r webReply, bearer bool) {
	t.Helper()
	if r.Status != http.StatusUnauthorized {
		t.Errorf("status %d, want 401: %s", r.Status, ahShow(r))
		return
	}
	env := webParseEnvelope(t, r)
	if env.Message != "Unauthorized" {
		t.Errorf("message %q, want Unauthorized", env.Message)
	}
	if bearer && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("WWW-Authenticate %q, want Bearer", r.Header.Get("WWW-Authenticate"))
	}
}

// jwks fetches the key set and returns its keys.
func (s *ahSuite) jwks(t *testing.T) []map[string]any {
	t.Helper()
	r := s.get(t, "/.well-known/jwks.json", "")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /.well-known/jwks.json answered %d: %s", r.Status, ahShow(r))
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(r.Body, &set); err != nil || set.Keys == nil {
		t.Fatalf("the JWKS is not {\"keys\":[...]}: %v: %s", err, ahShow(r))
	}
	return set.Keys
}

// ahShow describes an answer for a failure message: its body, unless the
// body may carry a token or secret, in which case only its length.
func ahShow(r webReply) string { return ahShowBody(r.Body) }

func ahShowBody(b []byte) string {
	if bytes.Contains(b, []byte("Token")) || bytes.Contains(b, []byte("eyJ")) {
		return fmt.Sprintf("<%d bytes withheld: they may hold a token>", len(b))
	}
	return webShort(b)
}
