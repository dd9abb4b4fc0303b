package ginhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

const appOrigin = "https://app.example"

// corsServer is a guarded server (the "mine" assignment is owner-only)
// with CORS as o; nil is none.
func corsServer(t *testing.T, o *ginhttp.CORSOptions) string {
	t.Helper()
	f := newFixture(t, func(opts *ginhttp.Options) {
		opts.Authenticator = fakeAuth{}
		opts.EnableGuards = true
		opts.CORS = o
	})
	return f.listen(t)
}

// preflight sends the OPTIONS request a browser sends before a PUT with a
// bearer token and If-Match.
func preflight(t *testing.T, url, origin string) (int, http.Header, string) {
	t.Helper()
	return do(t, http.MethodOptions, url, "", "Origin", origin,
		"Access-Control-Request-Method", "PUT",
		"Access-Control-Request-Headers", "authorization,content-type,if-match")
}

func headerList(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for _, item := range strings.Split(v, ",") {
			out = append(out, strings.ToLower(strings.TrimSpace(item)))
		}
	}
	return out
}

func wantAll(t *testing.T, h http.Header, name string, want ...string) {
	t.Helper()
	got := headerList(h, name)
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == strings.ToLower(w)
		}
		if !found {
			t.Errorf("%s = %q, missing %s", name, h.Values(name), w)
		}
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()

	t.Run("without origins no CORS header is sent, and a preflight is no special case", func(t *testing.T) {
		t.Parallel()
		base := corsServer(t, nil)
		st, h, body := preflight(t, base+"/cache/mine/x", appOrigin)
		if st != http.StatusMethodNotAllowed || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight without CORS = %d with Allow-Origin %q, want 405 and none", st, h.Get("Access-Control-Allow-Origin"))
		}
		wantEnvelope(t, body, http.StatusMethodNotAllowed, "Method Not Allowed", "METHOD_NOT_ALLOWED")
		st, h, _ = do(t, http.MethodGet, base+"/cache/user", "", "Origin", appOrigin)
		if st != http.StatusOK || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET with an Origin = %d with Allow-Origin %q, want 200 and none", st, h.Get("Access-Control-Allow-Origin"))
		}
	})

	t.Run("a preflight from a listed origin answers 204 before the guard", func(t *testing.T) {
		t.Parallel()
		base := corsServer(t, &ginhttp.CORSOptions{Origins: []string{"http://localhost:5173", appOrigin}})
		for _, path := range []string{"/cache/mine/01a2164f-e018-7d96-8626-fc167d09670f", "/cache/mine", "/auth/refresh", "/token/refresh"} {
			st, h, body := preflight(t, base+path, appOrigin)
			if st != http.StatusNoContent || body != "" {
				t.Errorf("preflight of %s = %d %q, want 204 without a body", path, st, body)
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != appOrigin {
				t.Errorf("preflight of %s: Allow-Origin %q, want %q", path, got, appOrigin)
			}
			wantAll(t, h, "Access-Control-Allow-Methods", "GET", "POST", "PUT", "PATCH", "DELETE")
			wantAll(t, h, "Access-Control-Allow-Headers", "Authorization", "Content-Type", "If-Match", "If-None-Match", "Last-Event-ID")
			wantAll(t, h, "Vary", "Origin")
			if h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("preflight of %s allows credentials without --cors-credentials", path)
			}
			if h.Get("Access-Control-Max-Age") == "" {
				t.Errorf("preflight of %s has no Max-Age", path)
			}
		}
	})

	t.Run("answers to a listed origin carry the CORS headers, errors included", func(t *testing.T) {
		t.Parallel()
		base := corsServer(t, &ginhttp.CORSOptions{Origins: []string{appOrigin}})
		st, h, body := do(t, http.MethodGet, base+"/cache/mine", "", "Origin", "HTTPS://App.Example")
		if st != http.StatusUnauthorized {
			t.Fatalf("GET without a token = %d, want 401 (CORS must not open the guard)", st)
		}
		wantEnvelope(t, body, http.StatusUnauthorized, "Unauthorized", "UNAUTHORIZED")
		if got := h.Get("Access-Control-Allow-Origin"); got != "HTTPS://App.Example" {
			t.Errorf("Allow-Origin = %q, want the request's origin", got)
		}
		wantAll(t, h, "Access-Control-Expose-Headers", "ETag", "Location", "Retry-After")
		st, h, _ = do(t, http.MethodGet, base+"/cache/mine", "", "Origin", appOrigin, "Authorization", "Bearer good-"+alice)
		if st != http.StatusOK || h.Get("Access-Control-Allow-Origin") != appOrigin {
			t.Errorf("GET with a token = %d, Allow-Origin %q", st, h.Get("Access-Control-Allow-Origin"))
		}
	})

	t.Run("an origin not listed gets the API's own answer without CORS headers", func(t *testing.T) {
		t.Parallel()
		base := corsServer(t, &ginhttp.CORSOptions{Origins: []string{appOrigin}})
		for _, origin := range []string{"https://evil.example", "https://app.example.evil.example", "null", "http://app.example"} {
			st, h, _ := preflight(t, base+"/cache/mine", origin)
			if st != http.StatusMethodNotAllowed || h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("preflight from %s = %d, Allow-Origin %q; want 405 and none", origin, st, h.Get("Access-Control-Allow-Origin"))
			}
			st, h, _ = do(t, http.MethodGet, base+"/cache/user", "", "Origin", origin)
			if st != http.StatusOK || h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Expose-Headers") != "" {
				t.Errorf("GET from %s = %d, Allow-Origin %q; want 200 and no CORS header", origin, st, h.Get("Access-Control-Allow-Origin"))
			}
		}
	})

	t.Run("* allows any origin without credentials", func(t *testing.T) {
		t.Parallel()
		base := corsServer(t, &ginhttp.CORSOptions{Origins: []string{"*"}})
		st, h, _ := preflight(t, base+"/cache/mine", "https://anywhere.example")
		if st != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight with * = %d, Allow-Origin %q, Credentials %q", st, h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Allow-Credentials"))
		}
	})

	t.Run("credentials are allowed to listed origins when asked", func(t *testing.T) {
		t.Parallel()
		base := corsServer(t, &ginhttp.CORSOptions{Origins: []string{appOrigin}, Credentials: true})
		_, h, _ := preflight(t, base+"/auth/refresh", appOrigin)
		if h.Get("Access-Control-Allow-Credentials") != "true" || h.Get("Access-Control-Allow-Origin") != appOrigin {
			t.Errorf("preflight: Credentials %q, Allow-Origin %q", h.Get("Access-Control-Allow-Credentials"), h.Get("Access-Control-Allow-Origin"))
		}
		_, h, _ = do(t, http.MethodGet, base+"/cache/user", "", "Origin", appOrigin)
		if h.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("GET: Credentials %q, want true", h.Get("Access-Control-Allow-Credentials"))
		}
	})

	t.Run("contradictory options are refused at construction", func(t *testing.T) {
		t.Parallel()
		for _, o := range []ginhttp.CORSOptions{
			{Origins: []string{"*"}, Credentials: true},
			{Origins: []string{"*", appOrigin}},
			{Origins: []string{"app.example"}},
			{Origins: []string{appOrigin + "/"}},
		} {
			if _, err := ginhttp.New(ginhttp.Options{CORS: &o}); err == nil {
				t.Errorf("New with CORS %+v succeeded, want an error", o)
			}
		}
	})
}
