package ginhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/contract"
)

func TestCacheHTTPContractOnMemstore(t *testing.T) {
	t.Parallel()
	contract.CacheHTTP(t, func(t *testing.T) contract.CacheHTTPTarget {
		f := newFixture(t, func(o *ginhttp.Options) { o.BodyLimit = 512 << 10 })
		return contract.CacheHTTPTarget{
			BaseURL:     f.listen(t),
			Assignments: []string{"user", "org"},
			Advance:     f.clock.Advance,
			BodyLimit:   512 << 10,

			QuotaAssignment: "small",
			Quota:           smallQuota,
		}
	})
}

func TestCacheHTTPContractOnTheRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a real one-second expiry")
	}
	t.Parallel()
	contract.CacheHTTP(t, func(t *testing.T) contract.CacheHTTPTarget {
		f := newFixture(t, nil)
		stores, _ := application.NewAssignments(application.Assignment{Name: "user",
			Repo: f.cache.Assignments.Repos()[0], Policy: domain.PolicyPublic})
		uc, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: system.Clock{}, IDs: system.UUIDv7{}})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := ginhttp.New(ginhttp.Options{Cache: uc})
		if err != nil {
			t.Fatal(err)
		}
		f.server = srv
		return contract.CacheHTTPTarget{BaseURL: f.listen(t), Assignments: []string{"user"}}
	})
}

// fakeAuth accepts "good-<id>" tokens as the principal <id>, answers
// "invalid" with failed extra validation and "boom" with an
// infrastructure failure; anything else is unauthenticated.
type fakeAuth struct{}

func (fakeAuth) Authenticate(_ context.Context, tok string) (domain.Principal, error) {
	switch {
	case strings.HasPrefix(tok, "good-"):
		return domain.Principal{ID: strings.TrimPrefix(tok, "good-"), Username: "alice"}, nil
	case tok == "invalid":
		return domain.Principal{}, domain.ErrAccessTokenFailedValidation
	case tok == "boom":
		return domain.Principal{}, errors.New("database on fire: secret-detail")
	}
	return domain.Principal{}, domain.ErrUnauthenticated
}

// whoAmI is an integrator's handler reading CurrentUser.
var whoAmI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, ok := ginhttp.CurrentUser(r)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"authenticated": ok, "id": p.ID})
})

func guarded(t *testing.T, guards bool) (*fixture, string) {
	t.Helper()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator = fakeAuth{}
		o.EnableGuards = guards
		o.Routes = []ginhttp.Route{
			{Method: http.MethodGet, Path: "/me", Handler: whoAmI},
			{Method: http.MethodGet, Path: "/open/me", Handler: whoAmI, Public: true},
		}
	})
	return f, f.listen(t)
}

const alice = "a11ce000-0000-4000-8000-000000000001"

func TestGuard(t *testing.T) {
	t.Parallel()
	f, base := guarded(t, true)
	body := `{"key":"k","type":"t","data":1,"assignee":{"id":"` + alice + `"},"expiresIn":null}`
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	t.Run("a guarded route without a token is 401 with WWW-Authenticate", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"/me", "/cache/mine", "/cache/mine/" + alice} {
			status, h, b := do(t, http.MethodGet, base+path, "")
			if status != http.StatusUnauthorized || h.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("GET %s: %d %q %s", path, status, h.Get("WWW-Authenticate"), b)
			}
			wantEnvelope(t, b, 401, "Unauthorized", "UNAUTHORIZED")
		}
	})

	t.Run("a malformed Authorization header is 401", func(t *testing.T) {
		t.Parallel()
		for _, v := range []string{"", "Bearer", "Bearer ", "Basic abc", "Bearer a b", "Bearer a\tb", "Bearerabc",
			"Bearer " + strings.Repeat("a", ginhttp.MaxBearerTokenLen+1), "Bearer ===", "Bearer good-x=y"} {
			status, h, _ := do(t, http.MethodGet, base+"/me", "", "Authorization", v)
			if status != http.StatusUnauthorized || h.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("Authorization %.20q: %d", v, status)
			}
		}
	})

	t.Run("a valid token passes, in any case of the scheme", func(t *testing.T) {
		t.Parallel()
		for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
			status, _, b := do(t, http.MethodGet, base+"/me", "", "Authorization", scheme+"  good-"+alice)
			if status != http.StatusOK || !strings.Contains(b, `"id":"`+alice+`"`) || !strings.Contains(b, `"authenticated":true`) {
				t.Errorf("%s: %d %s", scheme, status, b)
			}
		}
	})

	t.Run("a token failing extra validation is 400", func(t *testing.T) {
		t.Parallel()
		status, _, b := do(t, http.MethodGet, base+"/me", "", bearer("invalid")...)
		if status != http.StatusBadRequest {
			t.Errorf("status %d", status)
		}
		wantEnvelope(t, b, 400, domain.ErrAccessTokenFailedValidation.Message, "ACCESS_TOKEN_FAILED_VALIDATION")
	})

	t.Run("an authenticator failure is a generic 500, logged without reaching the client", func(t *testing.T) {
		t.Parallel()
		status, h, b := do(t, http.MethodGet, base+"/me", "", append(bearer("boom"), "X-Request-Id", "boom-req")...)
		if status != http.StatusInternalServerError || strings.Contains(b, "secret-detail") {
			t.Errorf("%d %s", status, b)
		}
		wantEnvelope(t, b, 500, "Internal Server Error", "INTERNAL")
		if h.Get("X-Request-Id") != "boom-req" {
			t.Errorf("request id %q", h.Get("X-Request-Id"))
		}
		logs := f.logs.String()
		if !strings.Contains(logs, "secret-detail") || !strings.Contains(logs, `"request_id":"boom-req"`) {
			t.Errorf("the internal error was not logged with its request id: %s", logs)
		}
	})

	t.Run("public routes need no token and ignore a bad one", func(t *testing.T) {
		t.Parallel()
		for _, hdr := range [][]string{nil, bearer("nonsense"), bearer("invalid"), {"Authorization", "Basic x"}} {
			for _, path := range []string{"/healthz", "/readyz", "/open/me", "/cache/user", "/cache/nope"} {
				status, _, b := do(t, http.MethodGet, base+path, "", hdr...)
				want := http.StatusOK
				if path == "/cache/nope" {
					want = http.StatusNotFound
				}
				if status != want {
					t.Errorf("GET %s with %v: %d %s", path, hdr, status, b)
				}
			}
			status, _, b := do(t, http.MethodPost, base+"/cache/user", strings.Replace(body, `"k"`, fmt.Sprintf(`"k%d"`, len(hdr)+len(fmt.Sprint(hdr))), 1), hdr...)
			if status != http.StatusCreated {
				t.Errorf("POST /cache/user with %v: %d %s", hdr, status, b)
			}
		}
	})

	t.Run("CurrentUser sees the caller on a public route that got a valid token", func(t *testing.T) {
		t.Parallel()
		_, _, b := do(t, http.MethodGet, base+"/open/me", "", bearer("good-"+alice)...)
		if !strings.Contains(b, `"id":"`+alice+`"`) {
			t.Errorf("public route with a token: %s", b)
		}
		_, _, b = do(t, http.MethodGet, base+"/open/me", "")
		if !strings.Contains(b, `"authenticated":false`) {
			t.Errorf("public route without a token: %s", b)
		}
	})

	t.Run("owner assignments see only the caller's own entries", func(t *testing.T) {
		t.Parallel()
		bob := "b0b00000-0000-4000-8000-000000000002"
		status, _, b := do(t, http.MethodPost, base+"/cache/mine", body, bearer("good-"+alice)...)
		if status != http.StatusCreated {
			t.Fatalf("alice creates: %d %s", status, b)
		}
		var e struct{ ID string }
		_ = json.Unmarshal([]byte(b), &e)
		if status, _, _ := do(t, http.MethodGet, base+"/cache/mine/"+e.ID, "", bearer("good-"+alice)...); status != http.StatusOK {
			t.Errorf("alice reads her entry: %d", status)
		}
		if status, _, _ := do(t, http.MethodGet, base+"/cache/mine/"+e.ID, "", bearer("good-"+bob)...); status != http.StatusNotFound {
			t.Errorf("bob reads alice's entry: %d, want 404", status)
		}
		if status, _, _ := do(t, http.MethodPost, base+"/cache/mine", strings.Replace(body, `"k"`, `"k2"`, 1), bearer("good-"+bob)...); status != http.StatusForbidden {
			t.Errorf("bob creates for alice: %d, want 403", status)
		}
		if _, _, b := do(t, http.MethodGet, base+"/cache/mine", "", bearer("good-"+bob)...); b != "[]" {
			t.Errorf("bob lists: %s, want []", b)
		}
	})
}

func TestGuardsDisabled(t *testing.T) {
	t.Parallel()
	_, base := guarded(t, false)

	t.Run("routes are reachable without a token and the caller is anonymous", func(t *testing.T) {
		t.Parallel()
		status, _, b := do(t, http.MethodGet, base+"/me", "")
		if status != http.StatusOK || !strings.Contains(b, `"authenticated":false`) {
			t.Errorf("%d %s", status, b)
		}
	})

	t.Run("a presented token is still checked", func(t *testing.T) {
		t.Parallel()
		if status, _, _ := do(t, http.MethodGet, base+"/me", "", "Authorization", "Bearer nonsense"); status != http.StatusUnauthorized {
			t.Errorf("a bad token: %d, want 401", status)
		}
		_, _, b := do(t, http.MethodGet, base+"/me", "", "Authorization", "Bearer good-"+alice)
		if !strings.Contains(b, alice) {
			t.Errorf("a good token: %s", b)
		}
	})

	t.Run("the owner policy still needs a principal: 401", func(t *testing.T) {
		t.Parallel()
		status, h, _ := do(t, http.MethodGet, base+"/cache/mine", "")
		if status != http.StatusUnauthorized || h.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%d", status)
		}
	})
}

func TestNew(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]ginhttp.Options{
		"guards without an authenticator are refused": {EnableGuards: true},
		"a negative body limit is refused":            {BodyLimit: -1},
		"a bad trusted proxy is refused":              {TrustedProxies: []string{"not an ip"}},
		"a route without a handler is refused":        {Routes: []ginhttp.Route{{Method: "GET", Path: "/x"}}},
		"a route clashing with another is refused":    {Routes: []ginhttp.Route{{Method: "GET", Path: "/healthz", Handler: whoAmI}}},
		"a relative route path is refused":            {Routes: []ginhttp.Route{{Method: "GET", Path: "x", Handler: whoAmI}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := ginhttp.New(o); err == nil {
				t.Error("New succeeded")
			}
		})
	}
}

func wantEnvelope(t *testing.T, body string, status int, message, code string) {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	if env["statusCode"] != float64(status) || env["message"] != message || env["errorCode"] != code {
		t.Errorf("envelope %s, want %d %q %q", body, status, message, code)
	}
}

func TestGroupsShareOnePublicMarker(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) { o.Authenticator, o.EnableGuards = fakeAuth{}, true })
	err := f.server.HandleGroup(ginhttp.Group{Prefix: "/reports", Public: true, Routes: []ginhttp.Route{
		{Method: http.MethodGet, Path: "/daily", Handler: whoAmI},
		{Method: http.MethodGet, Path: "/weekly", Handler: whoAmI},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.server.HandleGroup(ginhttp.Group{Prefix: "/admin", Routes: []ginhttp.Route{
		{Method: http.MethodGet, Path: "/stats", Handler: whoAmI},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := f.server.HandleGroup(ginhttp.Group{Prefix: "nope/"}); err == nil {
		t.Error("a prefix without a leading slash must be refused")
	}
	base := f.listen(t)
	for path, want := range map[string]int{"/reports/daily": 200, "/reports/weekly": 200, "/admin/stats": 401} {
		if status, _, b := do(t, http.MethodGet, base+path, ""); status != want {
			t.Errorf("GET %s without a token: %d, want %d: %s", path, status, want, b)
		}
	}
}
