package ginhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

// consoleServer serves the fixture with the console on, guards on as the
// binary runs by default.
func consoleServer(t *testing.T, on bool) string {
	t.Helper()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator = fakeAuth{}
		o.EnableGuards = true
		o.Console = on
	})
	return f.listen(t)
}

// checkConsoleHeaders asserts the hardening every console answer carries.
func checkConsoleHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for name, want := range map[string]string{
		"Content-Security-Policy": ginhttp.ConsoleCSP,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s = %q, want %q", what, name, got, want)
		}
	}
}

func TestConsoleServesItsFilesWithoutATokenAndHardened(t *testing.T) {
	t.Parallel()
	base := consoleServer(t, true)
	for _, tc := range []struct {
		path, contentType, contains string
	}{
		{"/console/", "text/html; charset=utf-8", `<script type="module" src="app.js"></script>`},
		{"/console/index.html", "text/html; charset=utf-8", "<main"},
		{"/console/app.js", "text/javascript; charset=utf-8", "import"},
		{"/console/api.js", "text/javascript; charset=utf-8", "/token/refresh"},
		{"/console/console.css", "text/css; charset=utf-8", "@media"},
		{"/console/assignments.json", "application/json", `"user"`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			status, h, body := do(t, http.MethodGet, base+tc.path, "")
			if status != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", status, body)
			}
			if got := h.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if !strings.Contains(body, tc.contains) {
				t.Errorf("the body lacks %q", tc.contains)
			}
			checkConsoleHeaders(t, tc.path, h)
			etag := h.Get("ETag")
			if etag == "" || h.Get("Cache-Control") != "no-cache" {
				t.Fatalf("ETag %q, Cache-Control %q: want an ETag, revalidated", etag, h.Get("Cache-Control"))
			}
			status, h, body = do(t, http.MethodGet, base+tc.path, "", "If-None-Match", etag)
			if status != http.StatusNotModified || body != "" {
				t.Errorf("with If-None-Match its ETag: status %d, body %q; want 304 and no body", status, body)
			}
			checkConsoleHeaders(t, tc.path+" (304)", h)
			status, h, body = do(t, http.MethodHead, base+tc.path, "")
			if status != http.StatusOK || body != "" || h.Get("ETag") != etag || h.Get("Content-Type") != tc.contentType {
				t.Errorf("HEAD: status %d, body %q, ETag %q, Content-Type %q; want 200, no body, the GET's ETag and type",
					status, body, h.Get("ETag"), h.Get("Content-Type"))
			}
			checkConsoleHeaders(t, tc.path+" (HEAD)", h)
		})
	}
}

func TestConsoleListsTheConfiguredAssignments(t *testing.T) {
	t.Parallel()
	_, _, body := do(t, http.MethodGet, consoleServer(t, true)+"/console/assignments.json", "")
	var names []string
	if err := json.Unmarshal([]byte(body), &names); err != nil {
		t.Fatalf("assignments.json %q: %v", body, err)
	}
	slices.Sort(names)
	if want := []string{"mine", "org", "small", "user"}; !slices.Equal(names, want) {
		t.Errorf("assignments.json lists %v, want %v", names, want)
	}
}

func TestConsoleRedirectsItsBarePathAndRefusesUnknownFiles(t *testing.T) {
	t.Parallel()
	base := consoleServer(t, true)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(base + "/console")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/console/" {
		t.Errorf("GET /console: %d to %q, want 301 to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, p := range []string{"/console/nope.js", "/console/../go.mod", "/console/console_test.go", "/console/%2e%2e/server.go"} {
		status, h, body := do(t, http.MethodGet, base+p, "")
		if status != http.StatusNotFound || !strings.Contains(body, `"errorCode"`) {
			t.Errorf("GET %s: %d %s, want a 404 error answer", p, status, body)
		}
		if status == http.StatusNotFound {
			checkConsoleHeaders(t, p, h)
		}
	}
}

func TestConsoleIsNotServedWhenOff(t *testing.T) {
	t.Parallel()
	base := consoleServer(t, false)
	for _, p := range []string{"/console/", "/console/app.js"} {
		if status, _, _ := do(t, http.MethodGet, base+p, ""); status != http.StatusNotFound {
			t.Errorf("GET %s with the console off: %d, want 404", p, status)
		}
	}
}

func TestConsoleLeavesTheAPIRoutesAsTheyWere(t *testing.T) {
	t.Parallel()
	base := consoleServer(t, true)
	// The console's headers are its own: an API answer has no CSP, and a
	// guarded route still wants its token.
	status, h, _ := do(t, http.MethodGet, base+"/cache/mine", "")
	if status != http.StatusUnauthorized {
		t.Errorf("GET /cache/mine without a token: %d, want 401", status)
	}
	if h.Get("Content-Security-Policy") != "" {
		t.Errorf("an API answer carries the console's CSP")
	}
}

// BenchmarkGetByIDConsole is BenchmarkGetByIDWithBearer with the console
// off and on: its routes sit on their own prefix of the router with no
// middleware, so an API request runs the same chain either way
// (README, "Web console").
func BenchmarkGetByIDConsole(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "console off"
		if on {
			name = "console on"
		}
		b.Run(name, func(b *testing.B) {
			f := newFixture(b, func(o *ginhttp.Options) {
				o.Authenticator, o.EnableGuards, o.Console = fakeAuth{}, true, on
			})
			h := f.server.Handler()
			req := httptest.NewRequest(http.MethodGet, "/cache/mine/"+benchEntry(b, f, "mine"), nil)
			req.Header.Set("Authorization", "Bearer good-"+alice)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
