package ginhttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/application"
)

// capBound bounds each wait of the cap tests; none asserts a latency.
const capBound = 10 * time.Second

const bob = "b0b00000-0000-4000-8000-000000000002"

// seedLarge gives assignee, in assignment a, more data than the kernel's
// socket buffers of one connection hold (about 10 MB), so that a list to
// a client that does not read cannot finish.
func seedLarge(t *testing.T, f *fixture, a, assignee string) {
	t.Helper()
	data := []byte(`"` + strings.Repeat("x", 200<<10) + `"`)
	for i := range 50 {
		_, err := f.cache.Create.Execute(context.Background(), application.CreateCacheInput{Assignment: a,
			Cache: application.CacheInput{Key: "big" + itoa(i), Type: "t", AssigneeID: assignee, Data: data}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// held is a request sent on a connection of its own whose response head
// was read; the rest of the response is never read, so a list or stream
// stays open until close.
type held struct {
	conn net.Conn
	resp *http.Response
}

// open dials base (from the local IP from, "" for any), sends GET path
// with the headers hdr (name, value pairs) and reads the response head.
func open(t *testing.T, base, from, path string, hdr ...string) *held {
	t.Helper()
	d := net.Dialer{Timeout: capBound}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
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
	_ = conn.SetDeadline(time.Now().Add(capBound))
	req := "GET " + path + " HTTP/1.1\r\nHost: test\r\n"
	for i := 0; i+1 < len(hdr); i += 2 {
		req += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return &held{conn: conn, resp: resp}
}

// wantStatus fails unless h was answered status.
func (h *held) wantStatus(t *testing.T, what string, status int) {
	t.Helper()
	if h.resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d", what, h.resp.StatusCode, status)
	}
}

// wantTooMany fails unless h is a 429 TOO_MANY_REQUESTS in the error
// envelope with Retry-After: 1.
func (h *held) wantTooMany(t *testing.T, what string) {
	t.Helper()
	h.wantStatus(t, what, http.StatusTooManyRequests)
	if ra := h.resp.Header.Get("Retry-After"); ra != "1" {
		t.Errorf("%s: Retry-After %q, want 1", what, ra)
	}
	var env struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
		ErrorCode  string `json:"errorCode"`
	}
	if err := json.NewDecoder(h.resp.Body).Decode(&env); err != nil {
		t.Fatalf("%s: body: %v", what, err)
	}
	if env.StatusCode != http.StatusTooManyRequests || env.ErrorCode != limits.CodeTooManyRequests || env.Message == "" {
		t.Errorf("%s: body %+v, want the 429 envelope with code %s", what, env, limits.CodeTooManyRequests)
	}
}

// eventually retries try until it reports true, failing after capBound.
func eventually(t *testing.T, what string, try func() bool) {
	t.Helper()
	deadline := time.Now().Add(capBound)
	for !try() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, capBound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func bearer(id string) []string { return []string{"Authorization", "Bearer good-" + id} }

func TestTheFifthConcurrentListOfOneUserIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator, o.EnableGuards = fakeAuth{}, true
		o.Limits = limits.Options{ListsPerUser: 4}
	})
	seedLarge(t, f, "mine", alice)
	id := benchEntryT(t, f, "mine", alice)
	base := f.listen(t)

	var lists []*held
	for i := range 4 {
		h := open(t, base, "", "/cache/mine", bearer(alice)...)
		h.wantStatus(t, "alice's list "+itoa(i+1), http.StatusOK)
		lists = append(lists, h)
	}
	open(t, base, "", "/cache/mine", bearer(alice)...).wantTooMany(t, "alice's 5th list")
	if st, _, _ := do(t, http.MethodGet, base+"/cache/mine", "", bearer(bob)...); st != http.StatusOK {
		t.Errorf("bob's list beside alice's four: %d, want 200", st)
	}
	if st, _, _ := do(t, http.MethodGet, base+"/cache/mine/"+id, "", bearer(alice)...); st != http.StatusOK {
		t.Errorf("alice's GET by id beside her four lists: %d, want 200", st)
	}

	// The client of one list goes away: its place is free again.
	lists[0].conn.Close()
	eventually(t, "a new list of alice after one closed", func() bool {
		st, _, _ := do(t, http.MethodGet, base+"/cache/mine?limit=1", "", bearer(alice)...)
		return st == http.StatusOK
	})
}

func TestAnonymousListsAreCountedByClientAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator = fakeAuth{}
		o.Limits = limits.Options{ListsPerUser: 1}
	})
	seedLarge(t, f, "user", alice)
	base := f.listen(t)

	open(t, base, "", "/cache/user").wantStatus(t, "an anonymous list", http.StatusOK)
	open(t, base, "", "/cache/user").wantTooMany(t, "a second anonymous list from the same address")
	// On a public assignment a token still names the caller: alice is not
	// the anonymous address.
	if st, _, _ := do(t, http.MethodGet, base+"/cache/user?limit=1", "", bearer(alice)...); st != http.StatusOK {
		t.Errorf("alice's list beside an anonymous one from her address: %d, want 200", st)
	}
}

func TestTheSeventeenthStreamOfOneUserIsRefused(t *testing.T) {
	t.Parallel()
	// The default caps: 16 streams per user.
	f := newFixture(t, func(o *ginhttp.Options) { o.Authenticator, o.EnableGuards = fakeAuth{}, true })
	base := f.listen(t)
	var streams []*held
	for i := range limits.DefaultMaxStreamsPerUser {
		h := open(t, base, "", "/cache/mine/events", bearer(alice)...)
		h.wantStatus(t, "alice's stream "+itoa(i+1), http.StatusOK)
		streams = append(streams, h)
	}
	open(t, base, "", "/cache/mine/events", bearer(alice)...).wantTooMany(t, "alice's 17th stream")
	open(t, base, "", "/cache/mine/events", bearer(bob)...).wantStatus(t, "bob's stream", http.StatusOK)
	// The token of an EventSource, in the URL, names the same caller.
	open(t, base, "", "/cache/mine/events?access_token=good-"+alice).wantTooMany(t, "alice's stream by access_token")

	streams[3].conn.Close()
	eventually(t, "a new stream of alice after one closed", func() bool {
		h := open(t, base, "", "/cache/mine/events", bearer(alice)...)
		defer h.conn.Close()
		return h.resp.StatusCode == http.StatusOK
	})
}

// listenCapped serves f behind its connection cap (Server.Listener), as
// bootstrap/httpfx does.
func listenCapped(t *testing.T, f *fixture) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(f.server.Handler())
	ts.Listener = f.server.Listener(ts.Listener)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// keepAlive sends GET /healthz on a kept-alive connection from the local
// IP from and reads the whole answer, so the connection is known to be
// accepted (and counted) and stays open.
func keepAlive(t *testing.T, base, from string) *held {
	t.Helper()
	h := open(t, base, from, "/healthz")
	h.wantStatus(t, "GET /healthz from "+from, http.StatusOK)
	_, _ = io.Copy(io.Discard, h.resp.Body)
	return h
}

func TestTheConnectionBeyondTheCapOfOneAddressIsRefused(t *testing.T) {
	t.Parallel()
	const limit = 3
	f := newFixture(t, func(o *ginhttp.Options) {
		o.TrustedProxies = []string{"127.0.0.3"}
		o.Limits = limits.Options{ConnsPerAddress: limit}
	})
	base := listenCapped(t, f)

	var conns []*held
	for range limit {
		conns = append(conns, keepAlive(t, base, "127.0.0.1"))
	}
	open(t, base, "127.0.0.1", "/healthz").wantTooMany(t, "connection 4 from 127.0.0.1")
	keepAlive(t, base, "127.0.0.2")
	// A trusted proxy's connections are not counted.
	for range limit + 1 {
		keepAlive(t, base, "127.0.0.3")
	}

	conns[0].conn.Close()
	eventually(t, "a new connection from 127.0.0.1 after one closed", func() bool {
		h := open(t, base, "127.0.0.1", "/healthz")
		defer h.conn.Close()
		return h.resp.StatusCode == http.StatusOK
	})
}

func TestRequestsThroughATrustedProxyAreCountedByForwardedAddress(t *testing.T) {
	t.Parallel()
	const limit = 2
	f := newFixture(t, func(o *ginhttp.Options) {
		o.TrustedProxies = []string{"127.0.0.3"}
		o.Limits = limits.Options{ConnsPerAddress: limit, ListsPerUser: -1}
	})
	seedLarge(t, f, "user", alice)
	base := listenCapped(t, f)
	const xff = "X-Forwarded-For"

	for i := range limit {
		open(t, base, "127.0.0.3", "/cache/user", xff, "203.0.113.9").wantStatus(t, "list "+itoa(i+1)+" of 203.0.113.9", http.StatusOK)
	}
	open(t, base, "127.0.0.3", "/healthz", xff, "203.0.113.9").wantTooMany(t, "a request of 203.0.113.9 beyond its two in flight")
	open(t, base, "127.0.0.3", "/healthz", xff, "203.0.113.10").wantStatus(t, "a request of 203.0.113.10", http.StatusOK)
	open(t, base, "127.0.0.3", "/healthz").wantStatus(t, "the proxy's own request", http.StatusOK)
}

// benchEntryT creates one small entry of assignee and returns its id.
func benchEntryT(t *testing.T, f *fixture, a, assignee string) string {
	t.Helper()
	e, err := f.cache.Create.Execute(context.Background(), application.CreateCacheInput{Assignment: a,
		Cache: application.CacheInput{Key: "small", Type: "t", AssigneeID: assignee, Data: []byte(`1`)}})
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}
