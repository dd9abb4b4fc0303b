package cli_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/cli"
)

// `cachegate health` is the image's health check (docs/deployment.md):
// 0 when GET /readyz answers 200, 1 otherwise, whatever the reason.
func TestHealthExitsZeroOnlyWhenReadyzAnswers200(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.Method + " " + r.URL.Path)
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"errorCode":"DATABASE_UNAVAILABLE"}`))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	// From the configured address, as the image runs it.
	status.Store(http.StatusOK)
	code, stdout, stderr := run(t, &fakeRuntime{addr: addr}, nil, "health")
	if code != cli.ExitOK || !strings.Contains(stdout, "ready") || stderr != "" {
		t.Errorf("ready: exit %d, stdout %q, stderr %q; want 0", code, stdout, stderr)
	}
	if got := asked.Load(); got != "GET /readyz" {
		t.Errorf("health asked %v, want GET /readyz", got)
	}

	status.Store(http.StatusServiceUnavailable)
	code, _, stderr = run(t, &fakeRuntime{addr: addr}, nil, "health")
	if code != cli.ExitFailure || !strings.Contains(stderr, "503") || !strings.Contains(stderr, "DATABASE_UNAVAILABLE") {
		t.Errorf("503: exit %d, stderr %q; want 1 naming the status and the answer", code, stderr)
	}

	// --url wins over the address.
	status.Store(http.StatusOK)
	code, _, stderr = run(t, &fakeRuntime{addr: "127.0.0.1:1"}, nil, "health", "--url", srv.URL+"/readyz")
	if code != cli.ExitOK {
		t.Errorf("--url: exit %d, stderr %q; want 0", code, stderr)
	}

	// Nothing listening: 1, promptly.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	code, _, stderr = run(t, &fakeRuntime{addr: closed}, nil, "health")
	if code != cli.ExitFailure || !strings.Contains(stderr, "not ready") {
		t.Errorf("nothing listening: exit %d, stderr %q; want 1", code, stderr)
	}
}

func TestHealthGivesUpAfterItsTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	code, _, stderr := run(t, &fakeRuntime{}, nil, "health", "--url", srv.URL+"/readyz", "--timeout", "200ms")
	if code != cli.ExitFailure || !strings.Contains(stderr, "no answer within 200ms") {
		t.Errorf("hanging server: exit %d, stderr %q; want 1 and the timeout named", code, stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("health took %s with --timeout 200ms", d)
	}
	if code, _, _ := run(t, &fakeRuntime{}, nil, "health", "--timeout", "0s"); code != cli.ExitUsage {
		t.Errorf("--timeout 0s: exit %d, want 2", code)
	}
	if code, _, _ := run(t, &fakeRuntime{}, nil, "health", "--url", "::not a url"); code != cli.ExitUsage {
		t.Errorf("a bad --url: exit %d, want 2", code)
	}
}

func TestReadyURLAsksAWildcardAddressOnLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"0.0.0.0:8080":   "http://127.0.0.1:8080/readyz",
		":8080":          "http://127.0.0.1:8080/readyz",
		"[::]:8080":      "http://[::1]:8080/readyz",
		"127.0.0.1:8089": "http://127.0.0.1:8089/readyz",
		"10.1.2.3:80":    "http://10.1.2.3:80/readyz",
		"[::1]:8080":     "http://[::1]:8080/readyz",
	} {
		if got := cli.ReadyURL(addr); got != want {
			t.Errorf("ReadyURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
