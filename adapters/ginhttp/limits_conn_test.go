package ginhttp_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
)

// TestAHeaderOverTheLimitIsAnswered431BehindTheConnectionCap sends
// headers over the limit through Server.Listener, many at once: each
// client reads its whole 431, none a reset. net/http's 431 has no length
// (its body ends with the connection), so it half-closes the connection
// (CloseWrite) after it; a wrapper that hides CloseWrite leaves the body
// open until the full close, which the unread rest of the header turns
// into a reset.
func TestAHeaderOverTheLimitIsAnswered431BehindTheConnectionCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Limits = limits.Options{ConnsPerAddress: 1000}
	})
	ts := httptest.NewUnstartedServer(f.server.Handler())
	ts.Listener = f.server.Listener(ts.Listener)
	ts.Config.MaxHeaderBytes = f.server.MaxHeaderBytes()
	ts.Start()
	t.Cleanup(ts.Close)

	const clients, rounds = 8, 3
	big := strings.Repeat("x", 100<<10)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: capBound}
			for r := range rounds {
				req, err := http.NewRequest(http.MethodGet, ts.URL+"/healthz", nil)
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("X-Big", big)
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("client %d, round %d: %v, want the 431", c, r, err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Errorf("client %d, round %d: reading the %d answer: %v", c, r, resp.StatusCode, err)
					return
				}
				if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !strings.Contains(string(body), "431") {
					t.Errorf("client %d, round %d: %d %q, want the 431", c, r, resp.StatusCode, body)
				}
			}
		})
	}
	wg.Wait()
}

// TestTheCappedConnectionKeepsTheOptionalInterfacesOfATCPConnection
// checks what net/http looks for on a connection: half-closing and
// sendfile/splice.
func TestTheCappedConnectionKeepsTheOptionalInterfacesOfATCPConnection(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Limits = limits.Options{ConnsPerAddress: 2}
	})
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := f.server.Listener(inner)
	t.Cleanup(func() { ln.Close() })
	client, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := conn.(*net.TCPConn); ok {
		t.Fatal("the connection is not wrapped; the test checks nothing")
	}
	if _, ok := conn.(interface{ CloseWrite() error }); !ok {
		t.Error("no CloseWrite")
	}
	if _, ok := conn.(interface{ CloseRead() error }); !ok {
		t.Error("no CloseRead")
	}
	if _, ok := conn.(interface {
		ReadFrom(r io.Reader) (int64, error)
	}); !ok {
		t.Error("no ReadFrom")
	}
}
