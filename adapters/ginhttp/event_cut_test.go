package ginhttp_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

// smallBuffer is the socket buffer size (send on the server, receive on
// the client) of the cut tests: an event of bigData's size cannot fit in
// the two, so a client that stops reading stalls the server mid-event.
const smallBuffer = 4 << 10

// bigData is an entry's data far larger than both socket buffers.
var bigData = strings.Repeat("x", 200_000)

// smallSendBuffers accepts connections with a small send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(smallBuffer)
	}
	return c, err
}

// listenSmall serves f on loopback with small send buffers.
func (f *fixture) listenSmall(t *testing.T) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(f.server.Handler())
	ts.Listener = smallSendBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// openStalled sends GET path with proto on a connection with a small
// receive buffer and reads the response head; the body is read later.
func openStalled(t *testing.T, base, path, proto string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.(*net.TCPConn).SetReadBuffer(smallBuffer); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(streamBound))
	if _, err := io.WriteString(conn, "GET "+path+" "+proto+"\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	// The head only: the body is read raw, the test does the framing.
	var head bytes.Buffer
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the response head: %v (after %q)", err, head.String())
		}
		head.WriteString(l)
		if l == "\r\n" {
			break
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(&head), &http.Request{Method: http.MethodGet})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("response head %q: %v", head.String(), err)
	}
	return conn, br, resp
}

// chunks splits a chunked body into the payloads of its complete chunks,
// the payload of a chunk cut short (nil when none) and whether the body
// ended with the terminating chunk.
func chunks(t *testing.T, body []byte) (whole [][]byte, cut []byte, terminated bool) {
	t.Helper()
	for len(body) > 0 {
		line, rest, ok := bytes.Cut(body, []byte("\r\n"))
		if !ok {
			return whole, []byte{}, false // cut inside a chunk header
		}
		n, err := strconv.ParseUint(string(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk header %q: %v", line, err)
		}
		if n == 0 {
			if !bytes.Equal(rest, []byte("\r\n")) {
				t.Fatalf("after the terminating chunk: %q", rest)
			}
			return whole, nil, true
		}
		if uint64(len(rest)) < n+2 {
			return whole, rest[:min(uint64(len(rest)), n)], false
		}
		if !bytes.Equal(rest[n:n+2], []byte("\r\n")) {
			t.Fatalf("chunk of %d bytes is not followed by CRLF: %q", n, rest[n:n+2])
		}
		whole = append(whole, rest[:n])
		body = rest[n+2:]
	}
	return whole, nil, false
}

// waitLog waits until logs hold a line containing s.
func waitLog(t *testing.T, logs *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(streamBound)
	for !strings.Contains(logs.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line %q within %s", s, streamBound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkPartialEvent fails unless rest (what a client's parser holds after
// the last complete event) is the beginning of a created event cut short:
// an id line, an event line, a data line with no line end inside (JSON
// text), in that order, each but the last whole; no blank line that would
// dispatch it, no end event, no bytes of anything else.
func checkPartialEvent(t *testing.T, rest string) {
	t.Helper()
	if rest == "" {
		t.Fatal("the client received no part of the event: the test did not cut a write mid-event")
	}
	if len(rest) >= len(bigData) {
		t.Fatalf("the event is %d bytes long: not cut", len(rest))
	}
	tail := rest[max(0, len(rest)-80):]
	lines := strings.Split(rest, "\n")
	whole := []func(string) bool{
		func(l string) bool { _, ok := parseID(l); return ok },
		func(l string) bool { return l == "event: created" },
		func(l string) bool { return false }, // the data line cannot end: its blank line would dispatch the event
	}
	started := []string{"id: ", "event: created", "data: {"}
	if len(lines) > len(whole) {
		t.Fatalf("the partial event has %d lines (ends %q): more than an event's", len(lines), tail)
	}
	for i, l := range lines {
		last := i == len(lines)-1
		switch {
		case !last && !whole[i](l):
			t.Fatalf("line %d of the partial event %.60q is not whole (event ends %q)", i, l, tail)
		case last && !strings.HasPrefix(l, started[i][:min(len(l), len(started[i]))]) &&
			!strings.HasPrefix(started[i], l):
			t.Fatalf("the partial event ends %q: not the beginning of an event line", tail)
		case last && i == 2 && strings.ContainsAny(l, "\r"):
			t.Fatalf("the partial event ends %q: bytes that are not the entry's", tail)
		}
	}
}

// parseID reads an id line.
func parseID(l string) (int64, bool) {
	v, ok := strings.CutPrefix(l, "id: ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// A client that stops reading mid-event is cut when the write deadline
// passes: the bytes it receives end where that write was cut, with no
// terminating chunk and no end event after the partial event, which never
// ends with a blank line. HTTP/1.1 runs on the connection taken over,
// HTTP/1.0 in the handler through net/http's writer.
func TestEventStreamCutMidEventWritesNothingMore(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		t.Run(proto+" ends where the failed write was cut", func(t *testing.T) {
			t.Parallel()
			debug := &lockedBuffer{}
			f := newFixture(t, func(o *ginhttp.Options) {
				o.Stream.WriteTimeout = 2 * time.Second
				o.Stream.Retry = 1500 * time.Millisecond
				o.Logger = slog.New(slog.NewJSONHandler(debug, &slog.HandlerOptions{Level: slog.LevelDebug}))
			})
			base := f.listenSmall(t)
			_, br, resp := openStalled(t, base, "/cache/user/events?assignee.id="+alice, proto)
			// The opening (retry and comment) fits in the buffers; then
			// the client reads nothing more until the server gave up.
			body := `{"key":"big","type":"t","data":"` + bigData + `","assignee":{"id":"` + alice + `"},"expiresIn":null}`
			if status, _, b := do(t, http.MethodPost, base+"/cache/user", body); status != http.StatusCreated {
				t.Fatalf("POST: %d %s", status, b)
			}
			// The client reads again once the server gave up on the write
			// (its debug line says so), within the time a write after it
			// would get: any byte written after the failed write arrives.
			waitLog(t, debug, "connection cut")
			raw, err := io.ReadAll(br)
			if err != nil {
				t.Fatalf("reading what the server sent: %v (want its data, then end of file)", err)
			}
			var text string
			if proto == "HTTP/1.1" {
				if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
					t.Fatalf("Transfer-Encoding %v, want chunked", resp.TransferEncoding)
				}
				whole, cut, terminated := chunks(t, raw)
				if terminated {
					t.Fatal("the body ends with the terminating chunk after a write was cut")
				}
				if cut == nil {
					t.Fatal("no chunk was cut short: the bytes do not end where the failed write was cut")
				}
				for _, c := range whole {
					text += string(c)
				}
				text += string(cut)
			} else {
				text = string(raw)
			}
			const open = "retry: 1500\n: stream open\n"
			rest, ok := strings.CutPrefix(text, open)
			if !ok {
				t.Fatalf("the stream starts %.60q, want %q", text, open)
			}
			checkPartialEvent(t, rest)
		})
	}
}

// A subscriber dropped for lagging whose last write was complete gets the
// end event whole, then the end of the body.
func TestEventStreamLaggingAfterACompleteWriteEndsCleanly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) { o.Stream.WriteTimeout = time.Minute })
	base := f.listenSmall(t)
	_, br, _ := openStalled(t, base, "/cache/user/events?assignee.id="+alice, "HTTP/1.1")
	body := `{"key":"big","type":"t","data":"` + bigData + `","assignee":{"id":"` + alice + `"},"expiresIn":null}`
	if status, _, b := do(t, http.MethodPost, base+"/cache/user", body); status != http.StatusCreated {
		t.Fatalf("POST: %d %s", status, b)
	}
	// The stream is stuck writing the big event while more changes than
	// a subscription queues (256) arrive: the feed drops it.
	for i := range 300 {
		postEntry(t, base, fmt.Sprint("k", i))
	}
	raw, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	whole, cut, terminated := chunks(t, raw)
	if cut != nil || !terminated {
		t.Fatalf("the body was cut (%d bytes) or not terminated (%v): want it whole", len(cut), terminated)
	}
	var text strings.Builder
	for _, c := range whole {
		text.WriteString(string(c))
	}
	s := text.String()
	const end = "event: end\ndata: {\"reason\":\"lagging\"}\n\n"
	if !strings.HasSuffix(s, end) {
		t.Fatalf("the stream ends %q, want the lagging end event", s[max(0, len(s)-120):])
	}
	if !strings.Contains(s, bigData+"\"") {
		t.Fatal("the big event the stream was writing did not arrive whole")
	}
}
