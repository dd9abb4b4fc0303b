package ginhttp

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// Stream defaults.
const (
	// DefaultHeartbeat is how often an idle stream sends a comment.
	DefaultHeartbeat = 15 * time.Second
	// streamWriteTimeout bounds one write to a stream: a client that does
	// not read for that long is cut off, so its connection cannot pin a
	// goroutine forever.
	streamWriteTimeout = 10 * time.Second
)

// StreamOptions configure GET /cache/<a>/events.
type StreamOptions struct {
	// Heartbeat is the interval of the keep-alive comment; zero means
	// DefaultHeartbeat.
	Heartbeat time.Duration
	// SessionEnded, when set, is asked at every heartbeat whether the
	// caller's session (its refresh family) was ended by a logout; the
	// stream then ends.
	SessionEnded func(ctx context.Context, p domain.Principal) bool
}

// accessTokenParam carries the access token of a browser's EventSource,
// which cannot set headers; it is read on the events route only.
const accessTokenParam = "access_token"

// eventsQuery is the parsed query of the events route.
type eventsQuery struct {
	since                *int64
	key, typ, assigneeID string
}

// parseEventsQuery reads key, type, assignee.id and since (each at most
// once) and ignores access_token, which the guard read; anything else is a
// 400, as for lists. Last-Event-ID, when present, wins over since: a
// reconnecting EventSource sends it with the URL it first opened.
func parseEventsQuery(rawQuery string, lastEventID []string) (eventsQuery, error) {
	var (
		q    eventsQuery
		errs problems
	)
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, domain.InvalidField("query", "is not a valid URL query string")
	}
	for name, vs := range values {
		if name == accessTokenParam {
			continue
		}
		if len(vs) != 1 {
			errs.add(name, "must be given once")
			continue
		}
		v := vs[0]
		switch name {
		case "key", "type", "assignee.id":
			if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 || v == "" {
				errs.add(name, "must be non-empty valid UTF-8 without NUL characters")
				continue
			}
			switch name {
			case "key":
				q.key = v
			case "type":
				q.typ = v
			default:
				q.assigneeID = v
			}
		case "since":
			rev, ok := parseRevision(v)
			if !ok {
				errs.add("since", "must be a revision: a non-negative integer")
				continue
			}
			q.since = &rev
		default:
			errs.add(clip(name), "is not a parameter of the change feed; use since, key, type or assignee.id")
		}
	}
	switch len(lastEventID) {
	case 0:
	case 1:
		rev, ok := parseRevision(strings.TrimSpace(lastEventID[0]))
		if !ok {
			errs.add("Last-Event-ID", "must be a revision: a non-negative integer")
		} else {
			q.since = &rev
		}
	default:
		errs.add("Last-Event-ID", "must be given once")
	}
	return q, domain.Invalid(errs...)
}

func parseRevision(s string) (int64, bool) {
	if s == "" || len(s) > 19 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// bearerFromQuery lets the events route take its token from access_token
// when no Authorization header is sent (EventSource cannot send one). The
// token is moved into the header and removed from the URL, so nothing
// downstream sees it there. It runs before the guard.
func bearerFromQuery(c *gin.Context) {
	r := c.Request
	if len(r.Header.Values("Authorization")) > 0 || !strings.Contains(r.URL.RawQuery, accessTokenParam) {
		return
	}
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return
	}
	toks := values[accessTokenParam]
	if len(toks) != 1 {
		return
	}
	values.Del(accessTokenParam)
	r.Header.Set("Authorization", "Bearer "+toks[0])
	r.URL.RawQuery = values.Encode()
}

// events streams the assignment's changes as Server-Sent Events
// (CONTRACT.md section 8).
func (r *cacheRoutes) events(c *gin.Context) {
	a, ok := r.assignment(c)
	if !ok {
		return
	}
	q, err := parseEventsQuery(c.Request.URL.RawQuery, c.Request.Header.Values("Last-Event-ID"))
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	actor := actorFrom(c)
	reqCtx := c.Request.Context()
	sub, err := r.uc.Watch.Execute(reqCtx, application.WatchCachesInput{Assignment: a, Actor: actor,
		Since: q.since, Key: q.key, Type: q.typ, AssigneeID: q.assigneeID})
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	defer sub.Close()

	// The stream outlives the server's read timeout; writes get a deadline
	// each instead.
	w := c.Writer
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"}
	w.WriteHeader(http.StatusOK)

	// ctx ends with the request or when the server shuts down.
	ctx, cancel := context.WithCancel(reqCtx)
	defer cancel()
	stop := context.AfterFunc(r.s.streams, cancel)
	defer stop()

	st := &stream{w: w, rc: rc, buf: make([]byte, 0, 1024)}
	if !st.flush([]byte(": stream open\n\n")) {
		return
	}
	beat := r.s.stream.Heartbeat
	expires := actor.Principal.ExpiresAt
	for {
		wait := time.Now().Add(beat)
		if !expires.IsZero() && expires.Before(wait) {
			wait = expires
		}
		nctx, ncancel := context.WithDeadline(ctx, wait)
		ev, err := sub.Next(nctx)
		ncancel()
		switch {
		case err == nil:
			if !st.event(&ev) {
				return
			}
			continue
		case reqCtx.Err() != nil:
			return
		case r.s.streams.Err() != nil, errors.Is(err, application.ErrFeedClosed):
			st.end("shutdown")
			return
		case errors.Is(err, application.ErrFeedLagging):
			st.end("lagging")
			return
		case !errors.Is(err, context.DeadlineExceeded):
			r.s.log.ErrorContext(reqCtx, "change feed failed", "err", err, "request_id", requestID(c))
			st.end("error")
			return
		}
		if !expires.IsZero() && !time.Now().Before(expires) {
			st.end("token expired")
			return
		}
		if f := r.s.stream.SessionEnded; f != nil && actor.Authenticated() && f(reqCtx, actor.Principal) {
			st.end("session ended")
			return
		}
		if !st.flush([]byte(": heartbeat\n\n")) {
			return
		}
	}
}

// stream writes Server-Sent Events to one client.
type stream struct {
	w   gin.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

// flush writes b and flushes it within streamWriteTimeout; false means
// the client is gone or stalled.
func (s *stream) flush(b []byte) bool {
	_ = s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := s.w.Write(b); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}

// event writes one change, or a reset.
func (s *stream) event(ev *application.FeedEvent) bool {
	b := s.buf[:0]
	if ev.Reset {
		b = append(b, "event: reset\ndata: {\"oldest\":"...)
		b = strconv.AppendInt(b, ev.Oldest, 10)
		b = append(b, "}\n\n"...)
	} else {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, ev.Change.Rev, 10)
		b = append(b, "\nevent: "...)
		b = append(b, ev.Change.Kind.String()...)
		b = appendData(b, appendEntry(getScratch(), &ev.Change.Entry))
		b = append(b, '\n')
	}
	s.buf = b
	return s.flush(b)
}

// getScratch returns an empty buffer for one entry's JSON.
func getScratch() []byte { return make([]byte, 0, 512) }

// appendData appends payload as data lines: one per line of payload, so
// the client, which joins them with newlines, gets payload back.
func appendData(b, payload []byte) []byte {
	for {
		i := indexLineEnd(payload)
		b = append(b, "\ndata: "...)
		if i < 0 {
			b = append(b, payload...)
			return append(b, '\n')
		}
		b = append(b, payload[:i]...)
		if payload[i] == '\r' && i+1 < len(payload) && payload[i+1] == '\n' {
			i++
		}
		payload = payload[i+1:]
	}
}

func indexLineEnd(b []byte) int {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

// end writes the end event, then the handler closes the stream.
func (s *stream) end(reason string) {
	b := append(s.buf[:0], "event: end\ndata: {\"reason\":"...)
	b = appendString(b, reason)
	b = append(b, "}\n\n"...)
	s.flush(b)
}
