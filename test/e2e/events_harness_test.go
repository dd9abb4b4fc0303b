package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// eventBound bounds waiting for one event; no test asserts a latency.
const eventBound = 15 * time.Second

// sseEvent is one Server-Sent Event as a client assembles it.
type sseEvent struct {
	ID    string
	Event string
	Data  string
	// Comment is set for a comment line (heartbeats), which is its own
	// item here.
	Comment string
}

// rev returns the event's id as a revision.
func (e sseEvent) rev(t *testing.T) int64 {
	t.Helper()
	n, err := strconv.ParseInt(e.ID, 10, 64)
	if err != nil {
		t.Fatalf("event id %q is not a revision", e.ID)
	}
	return n
}

// entry decodes the event's data as an entry.
func (e sseEvent) entry(t *testing.T) entry {
	t.Helper()
	var en entry
	if err := json.Unmarshal([]byte(e.Data), &en); err != nil {
		t.Fatalf("event %s data is not an entry: %v: %s", e.Event, err, e.Data)
	}
	return en
}

// sseStream is an open event stream.
type sseStream struct {
	Status int
	Header http.Header
	items  chan sseEvent
	closed chan struct{}
	cancel context.CancelFunc
}

// openStream opens url as an event stream with the headers hdr (name,
// value pairs). The stream is closed when the test ends.
func openStream(t *testing.T, url string, hdr ...string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", url, err)
	}
	s := &sseStream{Status: resp.StatusCode, Header: resp.Header, items: make(chan sseEvent, 4096),
		closed: make(chan struct{}), cancel: cancel}
	t.Cleanup(func() { cancel(); <-s.closed })
	go func() {
		defer close(s.closed)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Event != "" || data != nil || ev.ID != "" {
					ev.Data = strings.Join(data, "\n")
					s.items <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, ":"):
				s.items <- sseEvent{Comment: strings.TrimSpace(line[1:])}
			default:
				field, value, _ := strings.Cut(line, ":")
				value = strings.TrimPrefix(value, " ")
				switch field {
				case "id":
					ev.ID = value
				case "event":
					ev.Event = value
				case "data":
					data = append(data, value)
				}
			}
		}
	}()
	return s
}

// next returns the next event that is not a comment.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	deadline := time.After(eventBound)
	for {
		select {
		case ev := <-s.items:
			if ev.Comment == "" {
				return ev
			}
		case <-s.closed:
			select {
			case ev := <-s.items:
				if ev.Comment == "" {
					return ev
				}
				continue
			default:
			}
			t.Fatal("the stream closed while an event was expected")
		case <-deadline:
			t.Fatalf("no event within %s", eventBound)
		}
	}
}

// nextComment returns the next comment, skipping nothing else: an event
// before it fails the test.
func (s *sseStream) nextComment(t *testing.T, skip string) string {
	t.Helper()
	deadline := time.After(eventBound)
	for {
		select {
		case ev := <-s.items:
			if ev.Comment == "" {
				t.Fatalf("event %s %s before a comment", ev.Event, ev.ID)
			}
			if ev.Comment != skip {
				return ev.Comment
			}
		case <-s.closed:
			t.Fatal("the stream closed while a comment was expected")
		case <-deadline:
			t.Fatalf("no comment within %s", eventBound)
		}
	}
}

// quiet fails the test when an event arrives within d.
func (s *sseStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-s.items:
			if ev.Comment == "" {
				t.Fatalf("unexpected event %s id %s: %s", ev.Event, ev.ID, ev.Data)
			}
		case <-deadline:
			return
		}
	}
}

// waitClosed waits until the server closes the stream.
func (s *sseStream) waitClosed(t *testing.T) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(eventBound):
		t.Fatalf("the stream stayed open for %s", eventBound)
	}
}
