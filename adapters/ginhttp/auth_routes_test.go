package ginhttp_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/contract"
)

// authStack is the real authentication wiring over memstore, as
// bootstrap/authfx builds it: bcrypt at cost 4, josejwt, the system clock,
// and the guard's one-second subject cache.
type authStack struct {
	base   string
	admin  *application.Users
	tokens *josejwt.Tokens
	keys   *memstore.KeyStore
	secret []byte
}

// authSetup says how to build an authStack.
type authSetup struct {
	contract.AuthHTTPConfig
	// HS256 signs with a random secret instead of stored EdDSA keys.
	HS256 bool
	// RefreshFrom and RefreshName place the refresh token.
	RefreshFrom ginhttp.TokenLocation
	RefreshName string
	// Origins are the CORS origins.
	Origins []string
}

// authAdapter is the guard's port over the Authenticate use case.
type authAdapter struct{ uc *application.Authenticate }

func (a authAdapter) Authenticate(ctx context.Context, tok string) (domain.Principal, error) {
	return a.uc.Execute(ctx, tok)
}

func newAuthStack(t *testing.T, c authSetup) *authStack {
	t.Helper()
	ctx := context.Background()
	clock, ids := system.Clock{}, system.UUIDv7{}
	refresh, keys := memstore.NewRefreshStore(nil), memstore.NewKeyStore(nil)
	users := memstore.NewUserRepository(nil, refresh)
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	must(t, err)
	st := &authStack{keys: keys}
	jo := josejwt.Options{Keys: keys, Clock: clock}
	if c.HS256 {
		st.secret = make([]byte, 32)
		_, _ = rand.Read(st.secret)
		jo = josejwt.Options{HS256Secret: st.secret, Clock: clock}
	}
	st.tokens, err = josejwt.New(ctx, jo)
	must(t, err)
	lookup := application.RepoUserLookup{Users: users}
	validator, err := application.NewCredentialValidator(ctx, lookup, hasher, hasher)
	must(t, err)
	mint := application.TokenDeps{Issuer: st.tokens.Issuer(), Refresh: refresh, Clock: clock, IDs: ids, AccessTTL: c.AccessTTL}
	login, err := application.NewLogin(application.LoginDeps{Validator: validator, Tokens: mint,
		Throttle: memstore.NewLoginThrottle(), Users: users, Hasher: hasher,
		Limits: application.ThrottleLimits{PerUsername: c.UsernameLimit, PerAddress: c.AddressLimit, Window: c.ThrottleWindow}})
	must(t, err)
	revoked, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: refresh, Clock: clock,
		AccessTTL: c.AccessTTL, Poll: 100 * time.Millisecond})
	must(t, err)
	grace := c.ReuseGrace
	switch {
	case grace == 0:
		grace = 10 * time.Second // the configuration's default
	case grace < 0:
		grace = 0
	}
	must(t, err)
	refreshUC, err := application.NewRefresh(application.RefreshDeps{Verifier: st.tokens.Verifier(), Lookup: lookup,
		Tokens: mint, Revoked: revoked, ReuseGrace: grace})
	must(t, err)
	logout, err := application.NewLogout(refresh, clock, revoked, nil)
	must(t, err)
	authn, err := application.NewAuthenticate(st.tokens.Verifier(), nil,
		application.NewSubjectCache(lookup, time.Second, 0, clock), revoked, nil)
	must(t, err)
	check, err := application.NewAdminCheck(users, clock)
	must(t, err)
	st.admin, err = application.NewUsers(application.UsersDeps{Users: users, Hasher: hasher, Clock: clock, IDs: ids,
		Check: check, Refresh: refresh})
	must(t, err)
	stores, err := application.NewAssignments(application.Assignment{Name: "user", EntityKey: "userCache",
		Repo: memstore.NewCacheRepository(), Policy: domain.PolicyOwner})
	must(t, err)
	cache, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: ids})
	must(t, err)
	srv, err := ginhttp.New(ginhttp.Options{
		Cache:         cache,
		Authenticator: authAdapter{authn},
		EnableGuards:  true,
		Auth: &ginhttp.AuthOptions{Login: login, Refresh: refreshUC, Logout: logout, Keys: st.tokens,
			UsernameField: c.UsernameField, PasswordField: c.PasswordField,
			RefreshFrom: c.RefreshFrom, RefreshName: c.RefreshName, Origins: c.Origins},
	})
	must(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	st.base = ts.URL
	return st
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// addUser creates a user through the use case the CLI calls.
func (st *authStack) addUser(t *testing.T, username, password string, active bool) string {
	t.Helper()
	u, err := st.admin.Add(context.Background(), domain.System(), application.AddUserInput{Username: username, Password: password, Active: active})
	must(t, err)
	return u.ID
}

// target is the stack as the contract suite sees it.
func (st *authStack) target() contract.AuthHTTPTarget {
	tg := contract.AuthHTTPTarget{
		BaseURL: st.base,
		AddUser: st.addUser,
		DisableUser: func(t *testing.T, username string) {
			ctx, off := context.Background(), false
			u, err := st.admin.ByUsername(ctx, username)
			must(t, err)
			_, err = st.admin.Patch(ctx, domain.System(), u.ID, application.UserPatch{Active: &off})
			must(t, err)
		},
		SetPassword: func(t *testing.T, username, password string) {
			ctx := context.Background()
			u, err := st.admin.ByUsername(ctx, username)
			must(t, err)
			must(t, st.admin.ResetPassword(ctx, domain.System(), u.ID, password))
		},
		SubjectCacheTTL: time.Second,
	}
	if st.secret != nil {
		tg.SigningKey = func(*testing.T) domain.SigningKey {
			return domain.SigningKey{Algorithm: "HS256", Private: st.secret}
		}
		return tg
	}
	tg.Rotate = func(t *testing.T) {
		_, err := st.tokens.Rotate(context.Background(), true) // keys rotate --now
		must(t, err)
	}
	tg.SigningKey = func(t *testing.T) domain.SigningKey {
		all, err := st.keys.SigningKeys(context.Background())
		must(t, err)
		for _, k := range all {
			if k.RetiredAt == nil {
				return k
			}
		}
		t.Fatal("no current signing key")
		return domain.SigningKey{}
	}
	return tg
}

func TestAuthHTTPContractInProcess(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name  string
		hs256 bool
	}{
		{"with EdDSA keys", false},
		{"with an HS256 secret", true},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			contract.AuthHTTP(t, func(t *testing.T, c contract.AuthHTTPConfig) contract.AuthHTTPTarget {
				return newAuthStack(t, authSetup{AuthHTTPConfig: c, HS256: mode.hs256}).target()
			})
		})
	}
}

// login logs a fresh user in on st and returns the pair.
func (st *authStack) login(t *testing.T, body string) (access, refresh string) {
	t.Helper()
	status, _, b := do(t, http.MethodPost, st.base+"/auth/login", body)
	if status != http.StatusCreated {
		t.Fatalf("login: %d %s", status, b)
	}
	var pair struct{ AccessToken, RefreshToken string }
	must(t, json.Unmarshal([]byte(b), &pair))
	return pair.AccessToken, pair.RefreshToken
}

var testLimits = contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100, ThrottleWindow: time.Minute, ReuseGrace: -1}

func TestRefreshTokenLocations(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		from ginhttp.TokenLocation
		key  string
		// send refreshes with tok; it returns the status.
		send func(t *testing.T, base, tok string) int
	}{
		{"the default is the body member refreshToken", "", "", func(t *testing.T, base, tok string) int {
			s, _, _ := do(t, http.MethodPost, base+"/auth/refresh", `{"refreshToken":"`+tok+`"}`)
			return s
		}},
		{"a configured body member", ginhttp.FromBody, "token", func(t *testing.T, base, tok string) int {
			s, _, _ := do(t, http.MethodPost, base+"/auth/refresh", `{"token":"`+tok+`"}`)
			return s
		}},
		{"a header", ginhttp.FromHeader, "X-Refresh-Token", func(t *testing.T, base, tok string) int {
			s, _, _ := do(t, http.MethodPost, base+"/auth/refresh", "", "X-Refresh-Token", tok)
			return s
		}},
		{"a header holding Bearer and the token", ginhttp.FromHeader, "X-Refresh-Token", func(t *testing.T, base, tok string) int {
			s, _, _ := do(t, http.MethodPost, base+"/auth/refresh", "", "X-Refresh-Token", "Bearer "+tok)
			return s
		}},
		{"a cookie", ginhttp.FromCookie, "rt", func(t *testing.T, base, tok string) int {
			s, _, _ := do(t, http.MethodPost, base+"/auth/refresh", "", "Cookie", "other=1; rt="+tok)
			return s
		}},
		{"a query parameter", ginhttp.FromQuery, "rt", func(t *testing.T, base, tok string) int {
			s, _, _ := do(t, http.MethodPost, base+"/auth/refresh?rt="+url.QueryEscape(tok), "")
			return s
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := newAuthStack(t, authSetup{AuthHTTPConfig: testLimits, RefreshFrom: c.from, RefreshName: c.key})
			st.addUser(t, "alice", "alice-password", true)
			_, rt := st.login(t, `{"username":"alice","password":"alice-password"}`)
			if got := c.send(t, st.base, rt); got != http.StatusCreated {
				t.Fatalf("refresh from %s answered %d, want 201", c.name, got)
			}
			if got := c.send(t, st.base, rt); got != http.StatusUnauthorized {
				t.Errorf("the reused token answered %d, want 401", got)
			}
			if got := c.send(t, st.base, ""); got != http.StatusUnauthorized {
				t.Errorf("an empty token answered %d, want 401", got)
			}
			if c.from != "" && c.from != ginhttp.FromBody {
				// The body is not read: a token there does not count.
				_, rt2 := st.login(t, `{"username":"alice","password":"alice-password"}`)
				s, _, _ := do(t, http.MethodPost, st.base+"/auth/refresh", `{"refreshToken":"`+rt2+`"}`)
				if s != http.StatusUnauthorized {
					t.Errorf("a token in the body answered %d, want 401 when it is read from the %s", s, c.from)
				}
			}
		})
	}
}

func TestCookieRefreshRefusesCrossSiteRequests(t *testing.T) {
	t.Parallel()
	st := newAuthStack(t, authSetup{AuthHTTPConfig: testLimits, RefreshFrom: ginhttp.FromCookie, RefreshName: "rt",
		Origins: []string{"https://app.example", "*"}})
	st.addUser(t, "alice", "alice-password", true)
	for _, c := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"a request of another site's page is refused", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"a request a browser marks cross-site is refused", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"cross-site is refused even from a CORS origin", []string{"Origin", "https://app.example", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"an opaque origin is refused", []string{"Origin", "null"}, http.StatusForbidden},
		{"a CORS origin may refresh", []string{"Origin", "https://app.example", "Sec-Fetch-Site", "same-site"}, http.StatusCreated},
		{"the API's own pages may refresh", []string{"Origin", st.base, "Sec-Fetch-Site", "same-origin"}, http.StatusCreated},
		{"a program sending neither header may refresh", nil, http.StatusCreated},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, rt := st.login(t, `{"username":"alice","password":"alice-password"}`)
			status, _, body := do(t, http.MethodPost, st.base+"/auth/refresh", "", append([]string{"Cookie", "rt=" + rt}, c.hdr...)...)
			if status != c.want {
				t.Fatalf("refresh answered %d %s, want %d", status, body, c.want)
			}
			if c.want == http.StatusForbidden {
				if !strings.Contains(body, `"CROSS_SITE_REQUEST_REFUSED"`) {
					t.Errorf("body %s lacks the error code", body)
				}
				// The refused request left the token alone: it still refreshes.
				if status, _, _ := do(t, http.MethodPost, st.base+"/auth/refresh", "", "Cookie", "rt="+rt); status != http.StatusCreated {
					t.Errorf("after the refusal the token answered %d, want 201", status)
				}
			}
		})
	}
}

func TestAuthOptionsAreValidated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		o    ginhttp.AuthOptions
	}{
		{"equal username and password fields", ginhttp.AuthOptions{UsernameField: "user", PasswordField: "user"}},
		{"a password field named like the default username", ginhttp.AuthOptions{PasswordField: "username"}},
		{"an unknown refresh location", ginhttp.AuthOptions{RefreshFrom: "env"}},
		{"a header without a name", ginhttp.AuthOptions{RefreshFrom: ginhttp.FromHeader}},
		{"a cookie without a name", ginhttp.AuthOptions{RefreshFrom: ginhttp.FromCookie}},
		{"a query without a name", ginhttp.AuthOptions{RefreshFrom: ginhttp.FromQuery}},
	} {
		t.Run(c.name+" fails New", func(t *testing.T) {
			t.Parallel()
			o := c.o
			if _, err := ginhttp.New(ginhttp.Options{Auth: &o}); err == nil {
				t.Error("New accepted the options")
			}
		})
	}
}

func TestLoginFieldNames(t *testing.T) {
	t.Parallel()
	cfg := testLimits
	cfg.UsernameField, cfg.PasswordField = "email", "pass"
	st := newAuthStack(t, authSetup{AuthHTTPConfig: cfg})
	st.addUser(t, "carol@example.com", "carol-password", true)
	for _, c := range []struct {
		name   string
		body   string
		status int
	}{
		{"the configured names log in", `{"email":"carol@example.com","pass":"carol-password"}`, http.StatusCreated},
		{"the configured names in another order log in", `{"pass":"carol-password","email":"Carol@Example.com"}`, http.StatusCreated},
		{"the default names are unknown fields", `{"username":"carol@example.com","password":"carol-password"}`, http.StatusBadRequest},
		{"one default name is an unknown field", `{"email":"carol@example.com","password":"carol-password"}`, http.StatusBadRequest},
		{"a wrong password with the configured names is 401", `{"email":"carol@example.com","pass":"wrong-password"}`, http.StatusUnauthorized},
		{"a field given twice is 400", `{"email":"carol@example.com","email":"x","pass":"carol-password"}`, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, _, b := do(t, http.MethodPost, st.base+"/auth/login", c.body)
			if status != c.status {
				t.Errorf("status %d, want %d: %s", status, c.status, b)
			}
			if status == http.StatusBadRequest && !strings.Contains(b, `"details"`) {
				t.Errorf("a 400 without details: %s", b)
			}
		})
	}
}

// The routes of a server without authentication use cases are absent.
func TestAuthRoutesAreOptional(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	base := f.listen(t)
	for _, p := range []string{"/auth/login", "/auth/refresh", "/auth/logout"} {
		if status, _, _ := do(t, http.MethodPost, base+p, `{}`); status != http.StatusNotFound {
			t.Errorf("POST %s answered %d without auth options, want 404", p, status)
		}
	}
	if status, _, _ := do(t, http.MethodGet, base+"/.well-known/jwks.json", ""); status != http.StatusNotFound {
		t.Errorf("GET /.well-known/jwks.json answered %d without auth options, want 404", status)
	}
}
