package ginhttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

// streamBound bounds each wait for the stream; no test asserts a latency.
const streamBound = 10 * time.Second

// rawStream is an event stream opened on a raw connection, so that the
// request's protocol version and the response's framing are the test's.
type rawStream struct {
	conn net.Conn
	resp *http.Response
	body *bufio.Reader
}

// openRaw sends a GET of path with proto ("HTTP/1.1", "HTTP/1.0") and
// reads the response head.
func openRaw(t *testing.T, base, path, proto, requestID string) *rawStream {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(streamBound))
	if _, err := io.WriteString(conn, "GET "+path+" "+proto+"\r\nHost: test\r\nX-Request-Id: "+requestID+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatal(err)
	}
	return &rawStream{conn: conn, resp: resp, body: bufio.NewReader(resp.Body)}
}

// line returns the stream's next line without its newline.
func (s *rawStream) line(t *testing.T) string {
	t.Helper()
	l, err := s.body.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the stream: %v (after %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

// expect reads lines and fails unless they are want, in order; a want
// ending in "*" matches by prefix.
func (s *rawStream) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		got := s.line(t)
		if p, ok := strings.CutSuffix(w, "*"); ok && strings.HasPrefix(got, p) || got == w {
			continue
		}
		t.Fatalf("stream line %q, want %q", got, w)
	}
}

// ended checks that the body ends cleanly (a terminating chunk when
// chunked) after what was read.
func (s *rawStream) ended(t *testing.T) {
	t.Helper()
	if rest, err := io.ReadAll(s.body); err != nil || len(rest) > 0 {
		t.Fatalf("after the end event: %q, %v; want a clean end of the body", rest, err)
	}
}

func accessLines(t *testing.T, logs, route string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", l)
		}
		if m["msg"] == "request" && m["route"] == route {
			out = append(out, m)
		}
	}
	return out
}

func postEntry(t *testing.T, base, key string) {
	t.Helper()
	body := `{"key":"` + key + `","type":"t","data":"v","assignee":{"id":"` + alice + `"},"expiresIn":null}`
	if status, _, b := do(t, http.MethodPost, base+"/cache/user", body); status != http.StatusCreated {
		t.Fatalf("POST: %d %s", status, b)
	}
}

const eventsRoute = "/cache/:assignment/events"

func TestEventStreamOverHTTP11TakesTheConnectionOverAndFramesLikeNetHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	base := f.listen(t)
	st := openRaw(t, base, "/cache/user/events?assignee.id="+alice, "HTTP/1.1", "stream-1")
	r := st.resp
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" ||
		r.Header.Get("Cache-Control") != "no-cache" || r.Header.Get("X-Accel-Buffering") != "no" ||
		r.Header.Get("X-Request-Id") != "stream-1" || r.Header.Get("Date") == "" {
		t.Fatalf("response head %d %v", r.StatusCode, r.Header)
	}
	if len(r.TransferEncoding) != 1 || r.TransferEncoding[0] != "chunked" || !r.Close {
		t.Fatalf("framing: Transfer-Encoding %v, Connection: close %v; want chunked, close", r.TransferEncoding, r.Close)
	}
	st.expect(t, "retry: 2000", ": stream open")
	postEntry(t, base, "k1")
	st.expect(t, "id: *", "event: created", `data: {"id":*`, "")
	// The stream is still open: its access line is not written yet.
	if got := accessLines(t, f.logs.String(), eventsRoute); len(got) != 0 {
		t.Fatalf("access line before the stream ended: %v", got)
	}

	f.server.CloseStreams()
	st.expect(t, "event: end", `data: {"reason":"shutdown"}`, "")
	st.ended(t)
	ctx, cancel := context.WithTimeout(t.Context(), streamBound)
	defer cancel()
	if err := f.server.WaitStreams(ctx); err != nil {
		t.Fatalf("WaitStreams after the stream ended: %v", err)
	}
	lines := accessLines(t, f.logs.String(), eventsRoute)
	if len(lines) != 1 || lines[0]["status"] != float64(200) || lines[0]["request_id"] != "stream-1" ||
		lines[0]["method"] != "GET" || lines[0]["client_ip"] != "127.0.0.1" || lines[0]["duration"] == nil {
		t.Fatalf("access lines of the stream: %v, want one, status 200, request stream-1", lines)
	}
}

func TestEventStreamOverHTTP10RunsInTheHandler(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	base := f.listen(t)
	st := openRaw(t, base, "/cache/user/events?assignee.id="+alice, "HTTP/1.0", "stream-10")
	if st.resp.StatusCode != http.StatusOK || st.resp.Header.Get("Content-Type") != "text/event-stream" ||
		len(st.resp.TransferEncoding) != 0 {
		t.Fatalf("response head %d %v %v", st.resp.StatusCode, st.resp.TransferEncoding, st.resp.Header)
	}
	st.expect(t, "retry: 2000", ": stream open")
	postEntry(t, base, "k1")
	st.expect(t, "id: *", "event: created", `data: {"id":*`, "")
	f.server.CloseStreams()
	st.expect(t, "event: end", `data: {"reason":"shutdown"}`, "")
	st.ended(t)
	deadline := time.Now().Add(streamBound)
	for len(accessLines(t, f.logs.String(), eventsRoute)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no access line for the ended stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEventStreamEndsWhenTheClientGoes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	base := f.listen(t)
	st := openRaw(t, base, "/cache/user/events", "HTTP/1.1", "stream-gone")
	st.expect(t, "retry: 2000", ": stream open")
	if err := st.conn.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), streamBound)
	defer cancel()
	if err := f.server.WaitStreams(ctx); err != nil {
		t.Fatalf("the stream of a client that closed its connection is still running: %v", err)
	}
	if lines := accessLines(t, f.logs.String(), eventsRoute); len(lines) != 1 {
		t.Fatalf("%d access lines for the stream, want 1", len(lines))
	}
}

func TestWaitStreamsReturnsWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	base := f.listen(t)
	st := openRaw(t, base, "/cache/user/events", "HTTP/1.1", "stream-wait")
	st.expect(t, "retry: 2000", ": stream open")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := f.server.WaitStreams(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitStreams with a stream open and its context canceled = %v, want context.Canceled", err)
	}
}

func TestEventStreamSendsAHeartbeatWhenIdle(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *ginhttp.Options) { o.Stream.Heartbeat = 20 * time.Millisecond })
	base := f.listen(t)
	st := openRaw(t, base, "/cache/user/events?assignee.id="+alice, "HTTP/1.1", "stream-beat")
	// Comment lines only: a blank line after one would make some clients
	// (@microsoft/fetch-event-source) dispatch an empty message.
	st.expect(t, "retry: 2000", ": stream open", ": heartbeat")
	postEntry(t, base, "k1")
	for {
		// Heartbeats may come before the event; nothing else may.
		l := st.line(t)
		if l == ": heartbeat" {
			continue
		}
		if !strings.HasPrefix(l, "id: ") {
			t.Fatalf("stream line %q, want a heartbeat or the event", l)
		}
		break
	}
	st.expect(t, "event: created", `data: {"id":*`, "", ": heartbeat", ": heartbeat")
}
