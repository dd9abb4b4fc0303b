package ginhttp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/domain"
)

func TestAccessLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) { o.Authenticator = fakeAuth{} })
	base := f.listen(t)
	const secretTok = "good-" + alice
	body := `{"key":"k","type":"t","data":"password=hunter2","assignee":{"id":"` + alice + `"},"expiresIn":null}`
	if status, _, b := do(t, http.MethodPost, base+"/cache/user?token=s3cr3t", body,
		"Authorization", "Bearer "+secretTok, "X-Request-Id", "log-1"); status != http.StatusCreated {
		t.Fatalf("POST: %d %s", status, b)
	}
	do(t, http.MethodGet, base+"/cache/user/"+alice+"?key=s3cr3t", "", "X-Request-Id", "log-2")
	do(t, http.MethodGet, base+"/nowhere", "", "X-Request-Id", "log-3")

	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(f.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", l)
		}
		if m["msg"] == "request" {
			lines[m["request_id"].(string)] = m
		}
	}
	for id, want := range map[string]struct {
		method, route string
		status        float64
	}{
		"log-1": {"POST", "/cache/:assignment", 201},
		"log-2": {"GET", "/cache/:assignment/:id", 404},
		"log-3": {"GET", "(unmatched)", 404},
	} {
		m, ok := lines[id]
		if !ok {
			t.Errorf("no access line for %s: %s", id, f.logs.String())
			continue
		}
		if m["method"] != want.method || m["route"] != want.route || m["status"] != want.status ||
			m["duration"] == nil || m["client_ip"] != "127.0.0.1" {
			t.Errorf("%s: access line %v, want %+v", id, m, want)
		}
	}
	for _, secret := range []string{"s3cr3t", "hunter2", secretTok, alice} {
		if strings.Contains(f.logs.String(), secret) {
			t.Errorf("the logs contain %q: %s", secret, f.logs.String())
		}
	}
}

func TestRecovery(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Routes = []ginhttp.Route{{Method: http.MethodGet, Path: "/boom", Public: true,
			Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") })}}
	})
	base := f.listen(t)
	status, h, b := do(t, http.MethodGet, base+"/boom", "", "X-Request-Id", "panic-1")
	if status != http.StatusInternalServerError || h.Get("X-Request-Id") != "panic-1" {
		t.Errorf("%d %v", status, h)
	}
	wantEnvelope(t, b, 500, "Internal Server Error", "INTERNAL")
	if strings.Contains(b, "kaboom") {
		t.Errorf("the panic reached the client: %s", b)
	}
	logs := f.logs.String()
	if strings.Count(logs, "kaboom") != 1 || !strings.Contains(logs, `"msg":"panic serving request"`) ||
		!strings.Contains(logs, `"status":500`) {
		t.Errorf("the panic was not logged once, with an access line: %s", logs)
	}
	if status, _, _ := do(t, http.MethodGet, base+"/healthz", ""); status != http.StatusOK {
		t.Errorf("the server did not survive: %d", status)
	}
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		ready  ginhttp.Pinger
		status int
		code   string
	}{
		"without a check the service is ready":               {nil, 200, ""},
		"a healthy database makes it ready":                  {pinger{}, 200, ""},
		"a failing database makes it unready":                {pinger{err: errors.New("connection refused")}, 503, "NOT_READY"},
		"a database that does not answer in time is unready": {pinger{block: true}, 503, "NOT_READY"},
		"an unavailable database says so": {pinger{err: fmt.Errorf("bunstore: %w: connection refused",
			domain.ErrDatabaseUnavailable)}, 503, "DATABASE_UNAVAILABLE"},
		"a full disk says so": {pinger{err: domain.ErrStorageFull}, 503, "STORAGE_FULL"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if c.ready != nil && c.ready.(pinger).block && testing.Short() {
				t.Skip("waits for the readiness timeout")
			}
			f := newFixture(t, func(o *ginhttp.Options) { o.Ready = c.ready })
			base := f.listen(t)
			status, _, b := do(t, http.MethodGet, base+"/readyz", "")
			if status != c.status {
				t.Errorf("status %d, want %d: %s", status, c.status, b)
			}
			if c.status == 200 && b != `{"status":"ok"}` {
				t.Errorf("body %s", b)
			}
			if c.code == "NOT_READY" {
				wantEnvelope(t, b, 503, "Service Unavailable", "NOT_READY")
			}
			if c.status == 503 {
				if !strings.Contains(b, `"errorCode":"`+c.code+`"`) {
					t.Errorf("body %s, want errorCode %s", b, c.code)
				}
				if strings.Contains(b, "refused") {
					t.Errorf("the check's error reached the client: %s", b)
				}
			}
			if status, _, b := do(t, http.MethodGet, base+"/healthz", ""); status != 200 || b != `{"status":"ok"}` {
				t.Errorf("healthz: %d %s", status, b)
			}
		})
	}
}

func TestRouting(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.BodyLimit = 64
		o.Routes = []ginhttp.Route{{Method: http.MethodPost, Path: "/echo", Public: true,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.ReadAll(r.Body); err != nil {
					w.WriteHeader(http.StatusTeapot)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			})}}
	})
	base := f.listen(t)

	t.Run("a wrong method is 405 with Allow, in the envelope", func(t *testing.T) {
		t.Parallel()
		status, h, b := do(t, http.MethodDelete, base+"/cache/user", "")
		if status != http.StatusMethodNotAllowed || !strings.Contains(h.Get("Allow"), "GET") || !strings.Contains(h.Get("Allow"), "POST") {
			t.Errorf("%d Allow=%q", status, h.Get("Allow"))
		}
		wantEnvelope(t, b, 405, "Method Not Allowed", "METHOD_NOT_ALLOWED")
	})

	t.Run("an unknown route is 404 in the envelope, with no redirect for a trailing slash", func(t *testing.T) {
		t.Parallel()
		// A collection's trailing slash is the collection (README.md,
		// "What the API does"); an item's is not.
		for _, p := range []string{"/nope", "/healthz/", "/cache/user/0193a000-0000-7000-8000-000000000001/"} {
			status, _, b := do(t, http.MethodGet, base+p, "")
			if status != http.StatusNotFound {
				t.Errorf("%s: %d", p, status)
			}
			wantEnvelope(t, b, 404, "Not Found", "NOT_FOUND")
		}
	})

	t.Run("an unknown assignment is 404 with its own code", func(t *testing.T) {
		t.Parallel()
		_, _, b := do(t, http.MethodGet, base+"/cache/userCache", "")
		wantEnvelope(t, b, 404, domain.ErrUnknownAssignment.Message, "CACHE_ASSIGNMENT_NOT_FOUND")
	})

	t.Run("the body limit applies to integrators' routes too", func(t *testing.T) {
		t.Parallel()
		status, _, _ := do(t, http.MethodPost, base+"/echo", strings.Repeat("x", 65))
		if status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", status)
		}
		if status, _, _ := do(t, http.MethodPost, base+"/echo", strings.Repeat("x", 64)); status != http.StatusNoContent {
			t.Errorf("a body at the limit: %d", status)
		}
	})
}

func TestAccessLogClientAddressBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		proxies []string
		want    string
	}{
		{"a loopback balancer that is trusted forwards the client address", []string{"127.0.0.0/8"}, "203.0.113.5"},
		{"an untrusted peer is logged as itself", nil, "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(o *ginhttp.Options) { o.TrustedProxies = tc.proxies })
			base := f.listen(t)
			do(t, http.MethodGet, base+"/healthz", "", "X-Forwarded-For", "198.51.100.1, 203.0.113.5", "X-Request-Id", "xff-1")
			if !strings.Contains(f.logs.String(), `"client_ip":"`+tc.want+`","request_id":"xff-1"`) {
				t.Errorf("access log %s, want client_ip %s", f.logs.String(), tc.want)
			}
		})
	}
}
