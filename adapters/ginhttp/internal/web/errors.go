package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// statuses is THE table from domain error kinds to HTTP statuses. No other
// place in cachegate decides a status for a domain error.
var statuses = map[domain.Kind]int{
	domain.KindInvalid:            http.StatusBadRequest,
	domain.KindNotFound:           http.StatusNotFound,
	domain.KindConflict:           http.StatusConflict,
	domain.KindPreconditionFailed: http.StatusPreconditionFailed,
	domain.KindUnauthenticated:    http.StatusUnauthorized,
	domain.KindForbidden:          http.StatusForbidden,
	domain.KindTooMany:            http.StatusTooManyRequests,
	domain.KindUnavailable:        http.StatusServiceUnavailable,
	domain.KindStorageFull:        http.StatusInsufficientStorage,
	domain.KindTooExpensive:       http.StatusUnprocessableEntity,
	domain.KindUnprocessable:      http.StatusUnprocessableEntity,
	domain.KindNotImplemented:     http.StatusNotImplemented,
}

// StatusOf is the status of kind k (statuses); any other kind is 500.
func StatusOf(k domain.Kind) int {
	if status, ok := statuses[k]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// ProtocolError is a failure of the HTTP protocol itself (no such route,
// wrong method, media type or size) that has no domain kind. It carries
// its own status; it is written through the same envelope as domain
// errors.
type ProtocolError struct {
	Status  int
	Code    string
	Message string
}

func (e *ProtocolError) Error() string { return e.Message }

// Protocol errors.
var (
	ErrRouteNotFound        = &ProtocolError{http.StatusNotFound, "NOT_FOUND", "Not Found"}
	ErrMethodNotAllowed     = &ProtocolError{http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method Not Allowed"}
	ErrUnsupportedMediaType = &ProtocolError{http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
		"the request body must be JSON sent with Content-Type: application/json"}
)

// PayloadTooLarge is the answer to a body over limit bytes.
func PayloadTooLarge(limit int64) *ProtocolError {
	return &ProtocolError{http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
		"the request body is larger than the limit of " + strconv.FormatInt(limit, 10) + " bytes"}
}

// Generic answers for internal failures: their text never reaches clients.
const (
	CodeInternal    = "INTERNAL"
	MessageInternal = "Internal Server Error"
)

// Errors answers failures in the error envelope, logging what the client
// is not told. It is shared by every room of the adapter.
type Errors struct {
	log    *slog.Logger
	format ErrorFormat
	// outages limits the log lines of repeated database failures.
	outages *LogLimiter
}

// NewErrors returns the error writer logging to log, rendering validation
// errors in format, and limiting repeated database failures by outages.
func NewErrors(log *slog.Logger, format ErrorFormat, outages *LogLimiter) *Errors {
	return &Errors{log: log, format: format, outages: outages}
}

// Fail answers err in the error envelope and stops the handler chain;
// see Respond.
func (s *Errors) Fail(c *gin.Context, err error) {
	if status, code := s.Respond(c.Writer, c.Request, RouteOf(c), err); status >= http.StatusInternalServerError {
		c.Set(ErrorCodeKey, code)
	}
	c.Abort()
}

// Respond writes the envelope
// {"statusCode","message","errorCode"[,"details"]}. A *domain.Error gets
// the status of its kind; an *httpError its own; anything else is an
// internal failure: logged once here, with the request id, and answered
// with a generic 500 that never carries the error's text. It returns the
// status and errorCode it answered.
func (s *Errors) Respond(w http.ResponseWriter, r *http.Request, route string, err error) (status int, code string) {
	var (
		de *domain.Error
		he *ProtocolError
	)
	switch {
	case errors.As(err, &de):
		status = StatusOf(de.Kind)
		msg := de.Message
		switch de.Kind {
		case domain.KindUnauthenticated:
			msg = "Unauthorized"
			w.Header().Set("WWW-Authenticate", "Bearer")
		case domain.KindTooMany, domain.KindUnavailable:
			w.Header().Set("Retry-After", strconv.FormatInt(RetryAfterSeconds(de.RetryAfter), 10))
		case domain.KindInternal:
			s.logInternal(w, r, route, err)
		}
		if de.Kind == domain.KindUnavailable || de.Kind == domain.KindStorageFull {
			s.logOutage(r, route, de.Code, err)
		}
		s.WriteEnvelope(w, r, status, msg, de.Code, de.Details)
		return status, de.Code
	case errors.As(err, &he):
		s.WriteEnvelope(w, r, he.Status, he.Message, he.Code, nil)
		return he.Status, he.Code
	case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// The client went away (or the server is past its shutdown
		// bound): nobody reads the answer and nothing failed here.
		s.log.LogAttrs(logContext(w, r), slog.LevelDebug, "request abandoned", slog.String("method", r.Method))
		s.WriteEnvelope(w, r, StatusClientClosed, "Client Closed Request", "CLIENT_CLOSED_REQUEST", nil)
		return StatusClientClosed, "CLIENT_CLOSED_REQUEST"
	default:
		s.logInternal(w, r, route, err)
		s.WriteEnvelope(w, r, http.StatusInternalServerError, MessageInternal, CodeInternal, nil)
		return http.StatusInternalServerError, CodeInternal
	}
}

// StatusClientClosed is nginx's 499, recorded (in the access log and the
// metrics) for requests whose client left before the answer.
const StatusClientClosed = 499

// RetryAfterSeconds rounds d up to whole seconds, at least one.
func RetryAfterSeconds(d time.Duration) int64 {
	secs := int64((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return secs
}

func (s *Errors) logInternal(w http.ResponseWriter, r *http.Request, route string, err error) {
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("err", err.Error()),
	}
	if route != "" {
		attrs = append(attrs, slog.String("route", route))
	}
	s.log.LogAttrs(logContext(w, r), slog.LevelError, "request failed", attrs...)
}

// logOutage logs a failure of the database (unavailable, storage full).
// During an outage every request meets the same failure, so identical
// failures are logged once per OutageLogInterval, with the count of those
// left out since the last line, instead of once per request; the access
// lines of these requests are limited the same way (logAccess).
func (s *Errors) logOutage(r *http.Request, route, code string, err error) {
	msg := err.Error()
	n, ok := s.outages.Admit(code+"\x00"+msg, time.Now())
	if !ok {
		return
	}
	attrs := []slog.Attr{slog.String("code", code), slog.String("err", msg)}
	if route != "" {
		attrs = append(attrs, slog.String("route", route))
	}
	if n > 0 {
		attrs = append(attrs, slog.Int64("repeated", n), slog.Duration("over", OutageLogInterval))
	}
	s.log.LogAttrs(r.Context(), slog.LevelError, "database failure", attrs...)
}

// writeEnvelope writes the error body. When a response was already started
// (a handler failed mid-stream) nothing more can be said to the client.
func (s *Errors) WriteEnvelope(w http.ResponseWriter, r *http.Request, status int, msg, code string, details []domain.FieldError) {
	if ww, ok := w.(interface{ Written() bool }); ok && ww.Written() {
		return
	}
	b := make([]byte, 0, 96+len(msg)+64*len(details))
	if s.format == ErrorFormatRockets && status == http.StatusBadRequest &&
		code == domain.CodeValidation && len(details) > 0 {
		WriteJSONTo(w, r, status, appendRocketsValidation(b, status, code, details))
		return
	}
	b = append(b, `{"statusCode":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"message":`...)
	b = AppendString(b, msg)
	b = append(b, `,"errorCode":`...)
	b = AppendString(b, code)
	if len(details) > 0 {
		b = append(b, `,"details":[`...)
		for i, d := range details {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"field":`...)
			b = AppendString(b, d.Field)
			b = append(b, `,"message":`...)
			b = AppendString(b, d.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	WriteJSONTo(w, r, status, b)
}

// JSONContentType is the Content-Type of every JSON answer.
var JSONContentType = []string{"application/json; charset=utf-8"}

// WriteJSON writes b, which is already JSON, with its length.
func WriteJSON(c *gin.Context, status int, b []byte) { WriteJSONTo(c.Writer, c.Request, status, b) }

// WriteJSONWithETag is WriteJSON with an ETag header, etag being the
// quoted entity tag. The ETag and Content-Length values share one string
// and one slice backing, each value capped so that adding to one header
// never overwrites the other.
func WriteJSONWithETag(c *gin.Context, status int, etag, b []byte) {
	var a [48]byte
	buf := append(a[:0], etag...)
	buf = strconv.AppendInt(buf, int64(len(b)), 10)
	s := string(buf)
	vals := []string{s[:len(etag)], s[len(etag):]}
	h := c.Writer.Header()
	h["Etag"] = vals[0:1:1]
	h["Content-Type"] = JSONContentType
	h["Content-Length"] = vals[1:2:2]
	c.Writer.WriteHeader(status)
	if c.Request.Method != http.MethodHead {
		_, _ = c.Writer.Write(b)
	}
}

func WriteJSONTo(w http.ResponseWriter, r *http.Request, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = JSONContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// logContext is r's context with the request id, taken from the answer's
// header when r did not come through the request id middleware (an
// integrator calling Server.WriteError from a handler of its own).
func logContext(w http.ResponseWriter, r *http.Request) context.Context {
	ctx := r.Context()
	if ports.RequestID(ctx) == "" {
		if id := RequestIDOf(w); id != "" {
			ctx = ports.WithRequestID(ctx, id)
		}
	}
	return ctx
}

// HeaderRequestID carries a request's id, in the request and the answer.
const HeaderRequestID = "X-Request-Id"

// RequestIDOf returns the request id set on an answer's header.
func RequestIDOf(w http.ResponseWriter) string {
	if v := w.Header()[HeaderRequestID]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// RouteOf is the matched route template, never the raw path, so that logs
// and metrics carry no ids and stay of bounded cardinality.
func RouteOf(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return "(unmatched)"
}

// ErrorCodeKey is the gin key under which Fail leaves the errorCode of a
// 5xx answer, for the access line's identity.
const ErrorCodeKey = "cachegate.errorCode"
