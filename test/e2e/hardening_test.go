package e2e

import (
	"bufio"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rawHeaderStatus sends GET /healthz with one header of n bytes over a
// plain socket and returns the status code the server answers.
func rawHeaderStatus(t *testing.T, base string, n int) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", n) + "\r\nConnection: close\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRequestHeaderLimitOnTheBinary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		args      []string
		fits, not int
	}{
		{"the default limit is 64 KiB", nil, 60 << 10, 80 << 10},
		{"--max-header-bytes sets it", []string{"--max-header-bytes", "16KiB"}, 12 << 10, 24 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, serverConfig{YAML: publicYAML, Args: tc.args})
			if got := rawHeaderStatus(t, s.URL, tc.fits); got != http.StatusOK {
				t.Errorf("a %d-byte header: %d, want 200", tc.fits, got)
			}
			if got := rawHeaderStatus(t, s.URL, tc.not); got != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("a %d-byte header: %d, want 431", tc.not, got)
			}
		})
	}
}

// TestTrustedProxiesOnTheBinary throttles failed logins per client address
// behind a balancer on loopback: with --trusted-proxies the address is the
// rightmost untrusted X-Forwarded-For hop, without it the peer's.
func TestTrustedProxiesOnTheBinary(t *testing.T) {
	t.Parallel()
	login := func(t *testing.T, c *http.Client, base, xff string) int {
		t.Helper()
		r := mustSend(t, c, http.MethodPost, base+"/auth/login", []byte(`{"username":"nobody","password":"wrong password"}`),
			"X-Forwarded-For", xff)
		return r.Status
	}
	for _, tc := range []struct {
		name    string
		trusted bool
	}{{"behind a trusted balancer", true}, {"without trusted proxies", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := []string{"--database", "sqlite:" + filepath.Join(dir, "auth.db"),
				"--throttle-address-limit", "2", "--throttle-username-limit", "100"}
			if tc.trusted {
				args = append(args, "--trusted-proxies", "127.0.0.1/32, 10.0.0.0/8")
			}
			s := startServer(t, serverConfig{Dir: dir, Args: args})
			c := newClient()
			for i := range 2 {
				if got := login(t, c, s.URL, "203.0.113.1, 10.0.0.9"); got != http.StatusUnauthorized {
					t.Fatalf("failure %d: %d, want 401", i+1, got)
				}
			}
			// A client prepending another address is still the rightmost untrusted hop.
			if got := login(t, c, s.URL, "198.51.100.77, 203.0.113.1"); got != http.StatusTooManyRequests {
				t.Errorf("third failure from 203.0.113.1: %d, want 429", got)
			}
			want := http.StatusTooManyRequests // every client is the balancer
			if tc.trusted {
				want = http.StatusUnauthorized // another client has its own count
			}
			if got := login(t, c, s.URL, "203.0.113.2"); got != want {
				t.Errorf("first failure from 203.0.113.2: %d, want %d", got, want)
			}
			if !tc.trusted {
				return
			}
			s.waitLog(t, "msg=request", "client_ip=203.0.113.2")
		})
	}
}
