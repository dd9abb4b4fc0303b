package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsCountWhatHappened scrapes the separate metrics listener
// after a login, a failed login, a create and a refresh.
func TestMetricsCountWhatHappened(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + dir + "/metrics.db"
	add := runCLI(t, dir, "a fine password\n", nil, "users", "add", "--username", "m", "--password-stdin", "--database", db)
	if add.Code != 0 {
		t.Fatalf("users add: %s", add.Stderr)
	}
	id := strings.TrimSpace(add.Stdout)
	metricsAddr := freeAddr(t)
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", db, "--metrics-addr", metricsAddr}})

	call := func(path, auth, body string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	field := func(body, name string) string {
		_, rest, _ := strings.Cut(body, `"`+name+`":"`)
		v, _, _ := strings.Cut(rest, `"`)
		return v
	}
	pair := call("/auth/login", "", `{"username":"m","password":"a fine password"}`)
	call("/auth/login", "", `{"username":"m","password":"wrong password"}`)
	call("/cache/user", field(pair, "accessToken"), `{"key":"k","type":"t","data":1,"assignee":{"id":"`+id+`"},"expiresIn":"1h"}`)
	call("/auth/refresh", "", `{"refreshToken":"`+field(pair, "refreshToken")+`"}`)

	res, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	text := string(b)
	for _, want := range []string{
		`cachegate_logins_total{outcome="success"} 1`,
		`cachegate_logins_total{outcome="failure"} 1`,
		`cachegate_refreshes_total{outcome="rotated"} 1`,
		`cachegate_cache_entries_created_total{assignment="user"} 1`,
		`cachegate_http_requests_total{method="POST",route="/cache/:assignment",status="201"} 1`,
		`cachegate_http_request_duration_seconds_count{method="POST",route="/auth/login"} 2`,
		`cachegate_db_max_open_connections{db="main"}`,
		`cachegate_audit_events_total{type="login.succeeded"} 1`,
		`cachegate_audit_events_total{type="login.failed"} 1`,
		`cachegate_audit_events_total{type="refresh.reused"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if res, err := http.Get(s.URL + "/metrics"); err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("with a metrics address, the main listener's /metrics answers %d, want 404", res.StatusCode)
		}
	}
}

// TestMetricsOnTheMainAddressNeedTheMetricsToken: without --metrics-addr,
// /metrics answers the metrics token (in OpenMetrics when asked) and an
// administrator's access token, and refuses another user's (403) and no
// token (401) (README.md, "What the API does").
func TestMetricsOnTheMainAddressNeedTheMetricsToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + dir + "/metrics.db"
	if add := runCLI(t, dir, "a fine password\n", nil, "users", "add", "--username", "m", "--password-stdin", "--database", db); add.Code != 0 {
		t.Fatalf("users add: %s", add.Stderr)
	}
	const token = "scraper-token-0123456789abcdef"
	tokenFile := filepath.Join(dir, "metrics-token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if add := runCLI(t, dir, "an admin password\n", nil, "users", "add", "--username", "root", "--admin", "--password-stdin", "--database", db); add.Code != 0 {
		t.Fatalf("users add --admin: %s", add.Stderr)
	}
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", db, "--metrics-token-file", tokenFile}})
	login := func(username, password string) string {
		t.Helper()
		res, err := http.Post(s.URL+"/auth/login", "application/json",
			strings.NewReader(`{"username":"`+username+`","password":"`+password+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		_, rest, _ := strings.Cut(string(b), `"accessToken":"`)
		access, _, _ := strings.Cut(rest, `"`)
		return access
	}
	access := login("m", "a fine password")
	admin := login("root", "an admin password")
	scrape := func(auth, accept string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), string(b)
	}
	if st, ct, body := scrape(token, ""); st != 200 || !strings.HasPrefix(ct, "text/plain") || !strings.Contains(body, "cachegate_logins_total") {
		t.Errorf("with the metrics token: %d %q", st, ct)
	}
	if st, ct, body := scrape(token, "application/openmetrics-text"); st != 200 ||
		!strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(strings.TrimSpace(body), "# EOF") {
		t.Errorf("with the metrics token, asked for OpenMetrics: %d %q", st, ct)
	}
	if st, _, _ := scrape(access, ""); st != http.StatusForbidden {
		t.Errorf("with a user's access token: %d, want 403", st)
	}
	if st, _, body := scrape(admin, ""); st != 200 || !strings.Contains(body, "cachegate_logins_total") {
		t.Errorf("with an administrator's access token: %d, want 200 and the metrics", st)
	}
	if st, _, _ := scrape("", ""); st != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", st)
	}
}
