package ginhttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// HeaderRequestID carries the request id, taken from the request when it
// is sane and echoed on every response.
const HeaderRequestID = web.HeaderRequestID

// maxRequestIDLen bounds a client-chosen request id.
const maxRequestIDLen = 128

// A generated request id is a random per-process prefix and a counter:
// unique within the process, unlikely to collide across replicas, and
// free of system calls on the hot path.
var (
	requestIDPrefix = newRequestIDPrefix()
	requestIDSeq    atomic.Uint64
)

func newRequestIDPrefix() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:]) + "-"
}

func newRequestID() string {
	var a [40]byte
	b := append(a[:0], requestIDPrefix...)
	b = strconv.AppendUint(b, requestIDSeq.Add(1), 36)
	return string(b)
}

// saneRequestID accepts 1..128 characters of [A-Za-z0-9._-], so a client's
// id can be logged and echoed without escaping or log injection.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// requestIDMiddleware takes X-Request-Id from the request when sane, else
// generates one, sets it on the response before anything is written, and
// puts it in the request's context (ports.WithRequestID) for the logger
// and every layer below. It records the request's client (web.SetClient),
// which handlers give the use cases as an input, not a context value.
func (s *Server) requestIDMiddleware(c *gin.Context) {
	id := c.Request.Header.Get(HeaderRequestID)
	if !saneRequestID(id) {
		id = newRequestID()
	}
	c.Writer.Header()[HeaderRequestID] = []string{id}
	client := domain.Client{Address: s.proxies.ClientAddr(c.Request), UserAgent: c.Request.UserAgent()}
	web.SetClient(c, client)
	c.Request = c.Request.WithContext(ports.WithRequestID(c.Request.Context(), id))
}

// requestID returns the id requestIDMiddleware set.
func requestID(c *gin.Context) string { return web.RequestIDOf(c.Writer) }

// recovery turns a panic below it into a generic 500, logged once with the
// request id and the stack. http.ErrAbortHandler keeps its meaning (abort
// the response silently) and is re-raised for net/http.
func (s *Server) recovery(c *gin.Context) {
	defer func() {
		rec := recover()
		if rec == nil {
			return
		}
		if rec == http.ErrAbortHandler {
			panic(rec)
		}
		s.log.LogAttrs(c.Request.Context(), slog.LevelError, "panic serving request",
			slog.String("method", c.Request.Method),
			slog.String("route", web.RouteOf(c)),
			slog.Any("panic", rec),
			slog.String("stack", string(debug.Stack())))
		s.errs.WriteEnvelope(c.Writer, c.Request, http.StatusInternalServerError, web.MessageInternal, web.CodeInternal, nil)
		c.Set(web.ErrorCodeKey, web.CodeInternal)
		c.Abort()
	}()
	c.Next()
}

// accessLog writes one line per request (logAccess): method, route
// template, status, duration, request id and client address, never
// headers, bodies or query strings, which may carry tokens, passwords or
// personal data. A request that panics is logged with status 500, the
// answer recovery gives it; an event stream that took its connection over
// writes its own line when it ends (detachLog).
func (s *Server) accessLog(c *gin.Context) {
	logging := s.log.Enabled(c.Request.Context(), slog.LevelInfo)
	if !logging && s.observer == nil {
		c.Next()
		return
	}
	start := time.Now()
	finished := false
	defer func() {
		if _, detached := c.Get(logDetached); detached {
			return
		}
		status := c.Writer.Status()
		if !finished && !c.Writer.Written() {
			status = http.StatusInternalServerError
		}
		s.logAccess(c.Request.Context(), c.Request.Method, web.RouteOf(c), status, c.GetString(web.ErrorCodeKey),
			time.Since(start), web.Client(c).Address)
	}()
	c.Next()
	finished = true
}

// logDetached is the gin key set on a request whose handler writes its
// access line itself, later (detachLog).
const logDetached = "cachegate.logDetached"

// detachLog takes the request's access line over from accessLog: the
// returned line is written (logAccess) by its caller when the request is
// really over, after the handler returned.
func (s *Server) detachLog(c *gin.Context, start time.Time) requestLine {
	c.Set(logDetached, true)
	return requestLine{method: c.Request.Method, route: web.RouteOf(c), clientIP: web.Client(c).Address, start: start}
}

// requestLine is what the access line of a detached request needs, taken
// from the request while its handler ran.
type requestLine struct {
	method, route, clientIP string
	start                   time.Time
}

// logAccess reports one finished request to the observer and, at level
// info, in the access log; ctx carries the request id and the trace, code
// is the errorCode of a failed answer ("" when unknown). A 5xx is a
// failure of the service that every request meets during an outage, so
// its line is limited like the error lines: one per method, route, status
// and code per web.OutageLogInterval, with repeated= (the lines left out)
// and over=; the observer still counts every request. Every other status
// keeps one line per request (README, "What the API does").
func (s *Server) logAccess(ctx context.Context, method, route string, status int, code string, took time.Duration, clientIP string) {
	if s.observer != nil {
		s.observer.ObserveRequest(method, route, status, took)
	}
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	var repeated int64
	if status >= http.StatusInternalServerError {
		n, ok := s.failures.Admit(method+"\x00"+route+"\x00"+strconv.Itoa(status)+"\x00"+code, s.now())
		if !ok {
			return
		}
		repeated = n
	}
	attrs := [...]slog.Attr{
		slog.String("method", method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", took),
		slog.String("client_ip", clientIP),
		{}, {}, {}, {},
	}
	n := len(attrs) - 4
	if code != "" {
		attrs[n] = slog.String("code", code)
		n++
	}
	if repeated > 0 {
		attrs[n] = slog.Int64("repeated", repeated)
		attrs[n+1] = slog.Duration("over", web.OutageLogInterval)
		n += 2
	}
	// With tracing on (Options.TracerProvider), the line names the
	// request's trace, so a log line leads to its spans.
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		attrs[n] = slog.String("trace_id", sc.TraceID().String())
		n++
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "request", attrs[:n]...)
}

// limitBody refuses bodies over the limit: at once when Content-Length says
// so, and otherwise when reading passes it (web.ReadBody answers 413 then).
func (s *Server) limitBody(c *gin.Context) {
	r := c.Request
	if r.ContentLength > s.bodyLimit {
		s.errs.Fail(c, web.PayloadTooLarge(s.bodyLimit))
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(c.Writer, r.Body, s.bodyLimit)
	}
}
