package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 10: the binary configured with --cors-origins (flag) or
// CACHEGATE_CORS_ORIGINS answers a browser's preflight with 204 before the
// guard, and marks its answers readable by that origin; without the
// setting, no CORS header at all; * with --cors-credentials stops
// start-up with one line naming the setting.
func TestCORSOnTheBinary(t *testing.T) {
	t.Parallel()
	const app = "http://localhost:5173"
	preflight := func(t *testing.T, s *server) reply {
		t.Helper()
		return mustSend(t, newClient(), http.MethodOptions, s.URL+"/cache/user", nil,
			"Origin", app, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization,content-type")
	}

	t.Run("configured by flag", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, serverConfig{Args: []string{"--database", "sqlite::memory:", "--cors-origins", app + ",https://app.example", "--cors-credentials"}})
		r := preflight(t, s)
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != app ||
			r.Header.Get("Access-Control-Allow-Credentials") != "true" ||
			!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "authorization") {
			t.Errorf("preflight = %d %v, want 204 allowing %s with credentials and Authorization", r.Status, r.Header, app)
		}
		r = mustSend(t, newClient(), http.MethodGet, s.URL+"/cache/user", nil, "Origin", app)
		if r.Status != http.StatusUnauthorized || r.Header.Get("Access-Control-Allow-Origin") != app ||
			!strings.Contains(strings.ToLower(r.Header.Get("Access-Control-Expose-Headers")), "etag") {
			t.Errorf("GET without a token = %d %v, want 401 readable by %s, exposing ETag", r.Status, r.Header, app)
		}
	})

	t.Run("configured by the environment", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, serverConfig{Args: []string{"--database", "sqlite::memory:"}, Env: []string{"CACHEGATE_CORS_ORIGINS=*"}})
		if r := preflight(t, s); r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("preflight with * = %d %v", r.Status, r.Header)
		}
	})

	t.Run("off by default", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, serverConfig{Args: []string{"--database", "sqlite::memory:"}})
		r := preflight(t, s)
		if r.Status == http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight without CORS = %d %v, want no CORS answer", r.Status, r.Header)
		}
	})

	t.Run("* with credentials stops start-up", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, t.TempDir(), "", nil, "serve", "--database", "sqlite::memory:", "--addr", "127.0.0.1:0",
			"--cors-origins", "*", "--cors-credentials")
		if r.Code == 0 || !strings.Contains(r.Stderr, "cors-credentials: cannot be used with the origin *") {
			t.Errorf("serve with * and credentials: exit %d, stderr %q", r.Code, r.Stderr)
		}
	})
}
