package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// capsBound bounds each wait of the caps test; it asserts no latency.
const capsBound = 10 * time.Second

// capsGet sends GET path on a new connection from the local IP from and
// reads the response head; the body is left unread (a stream stays
// open) until the returned connection is closed, at the latest when the
// test ends.
func capsGet(t *testing.T, base, from, path string) (net.Conn, *http.Response) {
	t.Helper()
	d := net.Dialer{Timeout: capsBound, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		// Linux routes all of 127.0.0.0/8 to the loopback; other systems
		// may have only 127.0.0.1.
		t.Skipf("no local address %s on this system: %v", from, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(capsBound))
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("GET %s from %s: %v", path, from, err)
	}
	return conn, resp
}

// capsWant429 fails unless resp is 429 TOO_MANY_REQUESTS in the error
// envelope with Retry-After: 1.
func capsWant429(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	var env struct {
		StatusCode int    `json:"statusCode"`
		ErrorCode  string `json:"errorCode"`
	}
	err := json.NewDecoder(resp.Body).Decode(&env)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || err != nil ||
		env.StatusCode != http.StatusTooManyRequests || env.ErrorCode != "TOO_MANY_REQUESTS" {
		t.Fatalf("%s: %d, Retry-After %q, body %+v (%v); want 429 TOO_MANY_REQUESTS, Retry-After 1",
			what, resp.StatusCode, resp.Header.Get("Retry-After"), env, err)
	}
}

// TestCallerCapsOnTheBinary: the stream cap per caller (here an anonymous
// one, counted by address) and the connection cap per address, set by
// their flags.
func TestCallerCapsOnTheBinary(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverConfig{YAML: publicYAML, Args: []string{"--max-streams-per-user", "2",
		"--max-conns-per-address", "3", "--events-heartbeat", "200ms"}})
	const events = "/cache/user/events"

	var streams []net.Conn
	for range 2 {
		conn, resp := capsGet(t, s.URL, "127.0.0.2", events)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream from 127.0.0.2: %d, want 200", resp.StatusCode)
		}
		streams = append(streams, conn)
	}
	conn, resp := capsGet(t, s.URL, "127.0.0.2", events)
	capsWant429(t, "the third stream from 127.0.0.2", resp)
	// The 429 did not close that connection: it is the third of the
	// address, so a fourth is refused before any HTTP is read.
	_, resp = capsGet(t, s.URL, "127.0.0.2", "/healthz")
	capsWant429(t, "a fourth connection from 127.0.0.2", resp)
	if _, resp := capsGet(t, s.URL, "127.0.0.3", events); resp.StatusCode != http.StatusOK {
		t.Fatalf("a stream from 127.0.0.3 beside the full 127.0.0.2: %d, want 200", resp.StatusCode)
	}

	conn.Close()
	streams[0].Close()
	deadline := time.Now().Add(capsBound)
	for {
		c, resp := capsGet(t, s.URL, "127.0.0.2", events)
		c.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new stream from 127.0.0.2 after one closed: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
