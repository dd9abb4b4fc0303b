package ginhttp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// An authenticated stream is re-checked when StreamOptions.Changed fires,
// not only at its heartbeat (an hour here): a re-check that passes keeps
// it open, one that fails ends it with `end` (session ended).
func TestEventStreamIsReauthorisedWhenAuthChanges(t *testing.T) {
	t.Parallel()
	changes := application.NewAuthChanges()
	var ended atomic.Bool
	var rechecks atomic.Int32
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator = fakeAuth{}
		o.Stream = ginhttp.StreamOptions{Heartbeat: time.Hour, Changed: changes.Changed,
			Recheck: func(_ context.Context, p domain.Principal, _ time.Time) error {
				rechecks.Add(1)
				if p.ID != alice {
					t.Errorf("re-checked %q, want the stream's caller %q", p.ID, alice)
				}
				if ended.Load() {
					return domain.ErrUnauthenticated
				}
				return nil
			}}
	})
	base := f.listen(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(streamBound))
	if _, err := io.WriteString(conn, "GET /cache/user/events?assignee.id="+alice+" HTTP/1.1\r\nHost: test\r\n"+
		"Authorization: Bearer good-"+alice+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodGet})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("open the stream: %v %v", resp, err)
	}
	st := &rawStream{conn: conn, resp: resp, body: bufio.NewReader(resp.Body)}
	// next returns the next "event:" line, skipping comments, retry and
	// blank lines.
	next := func() string {
		t.Helper()
		for {
			l := st.line(t)
			if strings.HasPrefix(l, "event: ") {
				return l
			}
		}
	}
	waitRechecks := func(n int32, what string) {
		t.Helper()
		deadline := time.Now().Add(streamBound)
		for rechecks.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("the stream did not re-check %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// The stream re-checks once when it starts, having taken the channel.
	waitRechecks(1, "when it started")
	// A change that refuses nothing: the stream re-checks and goes on.
	changes.Bump()
	waitRechecks(2, "when Changed fired")
	postEntry(t, base, "still-open")
	if ev := next(); ev != "event: created" {
		t.Fatalf("after a passing re-check: %q, want the created event", ev)
	}
	// A change that ends the session: end, then the connection closes.
	ended.Store(true)
	changes.Bump()
	if ev := next(); ev != "event: end" {
		t.Fatalf("after a failing re-check: %q, want end", ev)
	}
	st.expect(t, `data: {"reason":"session ended"}`, "")
	st.ended(t)
}
