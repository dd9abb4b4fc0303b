package ginhttp

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Stream defaults.
const (
	// DefaultHeartbeat is how often an idle stream sends a comment.
	DefaultHeartbeat = 15 * time.Second
	// DefaultStreamWriteTimeout bounds one write to a stream: a client
	// that does not read for that long is cut off, so its connection
	// cannot pin a goroutine forever.
	DefaultStreamWriteTimeout = 10 * time.Second
	// DefaultRetry is the reconnection delay a stream announces to its
	// client (`retry:`) when it opens.
	DefaultRetry = 2 * time.Second
)

// StreamOptions configure GET /cache/<a>/events.
type StreamOptions struct {
	// Heartbeat is the interval of the keep-alive comment; zero means
	// DefaultHeartbeat.
	Heartbeat time.Duration
	// Retry is the reconnection delay sent as `retry: <ms>` at the start
	// of every stream (whole milliseconds); zero means DefaultRetry.
	Retry time.Duration
	// WriteTimeout bounds each write to a stream; a write that fails or
	// times out cuts the connection with nothing more written (README,
	// "Change feed"). Zero means DefaultStreamWriteTimeout.
	WriteTimeout time.Duration
	// Recheck, when set, re-authorises an authenticated stream's caller
	// at now (application.Authenticate.Recheck: in memory, no query)
	// whenever Changed fires and at every heartbeat; an error ends the
	// stream with reason "session ended".
	Recheck func(ctx context.Context, p domain.Principal, now time.Time) error
	// Changed, when set, returns a channel closed at the next change that
	// may end a caller's authorisation (a session or a signing key
	// revoked): every stream waits on the one channel.
	Changed func() <-chan struct{}
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
		errs web.Problems
	)
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, domain.InvalidField("query", "is not a valid URL query string")
	}
	exact := map[string]*string{"key": &q.key, "type": &q.typ, "assignee.id": &q.assigneeID}
	for name, vs := range values {
		if name == accessTokenParam {
			continue
		}
		if len(vs) != 1 {
			errs.Add(name, "must be given once")
			continue
		}
		v := vs[0]
		switch name {
		case "key", "type", "assignee.id":
			if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 || v == "" {
				errs.Add(name, "must be non-empty valid UTF-8 without NUL characters")
				continue
			}
			*exact[name] = v
		case "since":
			rev, ok := parseRevision(v)
			if !ok {
				errs.Add("since", "must be a revision: a non-negative integer")
				continue
			}
			q.since = &rev
		default:
			errs.Add(web.Clip(name), "is not a parameter of the change feed; use since, key, type or assignee.id")
		}
	}
	switch len(lastEventID) {
	case 0:
	case 1:
		rev, ok := parseRevision(strings.TrimSpace(lastEventID[0]))
		if !ok {
			errs.Add("Last-Event-ID", "must be a revision: a non-negative integer")
		} else {
			q.since = &rev
		}
	default:
		errs.Add("Last-Event-ID", "must be given once")
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
// (docs/api.md, "Change feed"). On HTTP/1.1 the stream takes the connection
// over and runs on its own goroutine (event_stream.go says why); the
// handler returns at once.
func (r *cacheRoutes) events(c *gin.Context, a string) error {
	start := time.Now()
	held, ok := r.s.caps.Stream(c)
	if !ok {
		return nil
	}
	defer held.Release()
	q, err := parseEventsQuery(c.Request.URL.RawQuery, c.Request.Header.Values("Last-Event-ID"))
	if err != nil {
		return err
	}
	actor := web.Actor(c)
	reqCtx := c.Request.Context()
	sub, err := r.uc.Watch.Execute(reqCtx, application.WatchCachesInput{Assignment: a, Actor: actor,
		Since: q.since, Key: q.key, Type: q.typ, AssigneeID: q.assigneeID})
	if err != nil {
		return err
	}
	st := &stream{s: r.s, sub: sub, beat: r.s.stream.Heartbeat, expires: actor.Principal.ExpiresAt, actor: actor,
		requestID: requestID(c)}
	st.logCtx = ports.WithRequestID(r.s.streams, st.requestID)
	if sc := trace.SpanContextFromContext(reqCtx); sc.IsValid() {
		st.logCtx = trace.ContextWithSpanContext(st.logCtx, sc)
	}
	w := c.Writer
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"}

	if c.Request.ProtoMajor == 1 && c.Request.ProtoMinor == 1 && canHijack(w) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err == nil {
			line := r.s.detachLog(c, start)
			if rw.Reader.Buffered() > 0 {
				// The client sent more than its request: there is nothing
				// to read on a stream, and no next request to serve.
				_, _ = rw.Reader.Discard(rw.Reader.Buffered())
			}
			if err := writeHead(conn, h, r.s.stream.WriteTimeout); err != nil {
				sub.Close()
				_ = conn.Close()
				r.s.logAccess(st.logCtx, line.method, line.route, http.StatusOK, "", time.Since(start), line.clientIP)
				return nil
			}
			st.out = connSink{conn}
			r.s.streamStarted()
			kept := held.HandOff()
			go func() { defer kept.Release(); st.serveConn(conn, line) }()
			return nil
		}
		// Not expected (nothing was written yet); the stream can still
		// run in the handler.
		r.s.log.WarnContext(reqCtx, "change feed: take over the connection", "err", err, "request_id", st.requestID)
	}

	// Any other writer: the stream runs in the handler.
	defer sub.Close()
	rc := http.NewResponseController(w)
	// The stream outlives the server's read timeout; writes get a deadline
	// each instead.
	_ = rc.SetReadDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	// ctx ends with the request or when the server shuts down.
	ctx, cancel := context.WithCancel(reqCtx)
	defer cancel()
	stop := context.AfterFunc(r.s.streams, cancel)
	defer stop()
	st.req, st.out = reqCtx, writerSink{w: w, rc: rc}
	st.run(ctx)
	return nil
}
