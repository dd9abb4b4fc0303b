package ginhttp

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

// statusOf is THE table from domain error kinds to HTTP statuses. No other
// place in cachegate decides a status for a domain error.
func statusOf(k domain.Kind) int {
	switch k {
	case domain.KindInvalid:
		return http.StatusBadRequest
	case domain.KindNotFound:
		return http.StatusNotFound
	case domain.KindConflict:
		return http.StatusConflict
	case domain.KindPreconditionFailed:
		return http.StatusPreconditionFailed
	case domain.KindUnauthenticated:
		return http.StatusUnauthorized
	case domain.KindForbidden:
		return http.StatusForbidden
	case domain.KindTooMany:
		return http.StatusTooManyRequests
	case domain.KindUnavailable:
		return http.StatusServiceUnavailable
	case domain.KindStorageFull:
		return http.StatusInsufficientStorage
	case domain.KindTooExpensive, domain.KindUnprocessable:
		return http.StatusUnprocessableEntity
	case domain.KindNotImplemented:
		return http.StatusNotImplemented
	default:
		return http.StatusInternalServerError
	}
}

// httpError is a failure of the HTTP protocol itself (no such route, wrong
// method, media type or size) that has no domain kind. It carries its own
// status; it is written through the same envelope as domain errors.
type httpError struct {
	status  int
	code    string
	message string
}

func (e *httpError) Error() string { return e.message }

// Protocol errors.
var (
	errRouteNotFound        = &httpError{http.StatusNotFound, "NOT_FOUND", "Not Found"}
	errMethodNotAllowed     = &httpError{http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method Not Allowed"}
	errUnsupportedMediaType = &httpError{http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
		"the request body must be JSON sent with Content-Type: application/json"}
	errNotReady = &httpError{http.StatusServiceUnavailable, "NOT_READY", "Service Unavailable"}
)

func payloadTooLarge(limit int64) *httpError {
	return &httpError{http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
		"the request body is larger than the limit of " + strconv.FormatInt(limit, 10) + " bytes"}
}

// Generic answers for internal failures: their text never reaches clients.
const (
	codeInternal    = "INTERNAL"
	messageInternal = "Internal Server Error"
)

// writeError answers err in the error envelope and stops the handler
// chain; see respondError.
func (s *Server) writeError(c *gin.Context, err error) {
	if status, code := s.respondError(c.Writer, c.Request, routeOf(c), err); status >= http.StatusInternalServerError {
		c.Set(errorCodeKey, code)
	}
	c.Abort()
}

// WriteError answers err in cachegate's error envelope, through the same
// status table as the built-in routes, for integrators' handlers
// registered with Handle: a *domain.Error gets the status of its kind
// (401 adds WWW-Authenticate: Bearer, 429 and 503 add Retry-After); anything else
// is logged with the request id and answered as a generic 500.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	s.respondError(w, r, "", err)
}

// respondError writes the envelope
// {"statusCode","message","errorCode"[,"details"]}. A *domain.Error gets
// the status of its kind; an *httpError its own; anything else is an
// internal failure: logged once here, with the request id, and answered
// with a generic 500 that never carries the error's text. It returns the
// status and errorCode it answered.
func (s *Server) respondError(w http.ResponseWriter, r *http.Request, route string, err error) (status int, code string) {
	var (
		de *domain.Error
		he *httpError
	)
	switch {
	case errors.As(err, &de):
		status = statusOf(de.Kind)
		msg := de.Message
		switch de.Kind {
		case domain.KindUnauthenticated:
			msg = "Unauthorized"
			w.Header().Set("WWW-Authenticate", "Bearer")
		case domain.KindTooMany:
			w.Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(de.RetryAfter), 10))
		case domain.KindUnavailable:
			w.Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(de.RetryAfter), 10))
			s.logOutage(r, route, de.Code, err)
		case domain.KindStorageFull:
			s.logOutage(r, route, de.Code, err)
		case domain.KindInternal:
			s.logInternal(w, r, route, err)
		}
		s.writeEnvelope(w, r, status, msg, de.Code, de.Details)
		return status, de.Code
	case errors.As(err, &he):
		s.writeEnvelope(w, r, he.status, he.message, he.code, nil)
		return he.status, he.code
	case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// The client went away (or the server is past its shutdown
		// bound): nobody reads the answer and nothing failed here.
		s.log.LogAttrs(logContext(w, r), slog.LevelDebug, "request abandoned", slog.String("method", r.Method))
		s.writeEnvelope(w, r, statusClientClosed, "Client Closed Request", "CLIENT_CLOSED_REQUEST", nil)
		return statusClientClosed, "CLIENT_CLOSED_REQUEST"
	default:
		s.logInternal(w, r, route, err)
		s.writeEnvelope(w, r, http.StatusInternalServerError, messageInternal, codeInternal, nil)
		return http.StatusInternalServerError, codeInternal
	}
}

// statusClientClosed is nginx's 499, recorded (in the access log and the
// metrics) for requests whose client left before the answer.
const statusClientClosed = 499

// retryAfterSeconds rounds d up to whole seconds, at least one.
func retryAfterSeconds(d time.Duration) int64 {
	secs := int64((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return secs
}

func (s *Server) logInternal(w http.ResponseWriter, r *http.Request, route string, err error) {
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
// failures are logged once per outageLogInterval, with the count of those
// left out since the last line, instead of once per request; the access
// lines of these requests are limited the same way (logAccess).
func (s *Server) logOutage(r *http.Request, route, code string, err error) {
	msg := err.Error()
	n, ok := s.outages.admit(code+"\x00"+msg, time.Now())
	if !ok {
		return
	}
	attrs := []slog.Attr{slog.String("code", code), slog.String("err", msg)}
	if route != "" {
		attrs = append(attrs, slog.String("route", route))
	}
	if n > 0 {
		attrs = append(attrs, slog.Int64("repeated", n), slog.Duration("over", outageLogInterval))
	}
	s.log.LogAttrs(r.Context(), slog.LevelError, "database failure", attrs...)
}

// writeEnvelope writes the error body. When a response was already started
// (a handler failed mid-stream) nothing more can be said to the client.
func (s *Server) writeEnvelope(w http.ResponseWriter, r *http.Request, status int, msg, code string, details []domain.FieldError) {
	if ww, ok := w.(interface{ Written() bool }); ok && ww.Written() {
		return
	}
	b := make([]byte, 0, 96+len(msg)+64*len(details))
	if s.errorFormat == ErrorFormatRockets && status == http.StatusBadRequest &&
		code == domain.CodeValidation && len(details) > 0 {
		writeJSONTo(w, r, status, appendRocketsValidation(b, status, code, details))
		return
	}
	b = append(b, `{"statusCode":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"errorCode":`...)
	b = appendString(b, code)
	if len(details) > 0 {
		b = append(b, `,"details":[`...)
		for i, d := range details {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"field":`...)
			b = appendString(b, d.Field)
			b = append(b, `,"message":`...)
			b = appendString(b, d.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	writeJSONTo(w, r, status, b)
}

var jsonContentType = []string{"application/json; charset=utf-8"}

// writeJSON writes b, which is already JSON, with its length.
func writeJSON(c *gin.Context, status int, b []byte) { writeJSONTo(c.Writer, c.Request, status, b) }

func writeJSONTo(w http.ResponseWriter, r *http.Request, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// logContext is r's context with the request id, taken from the answer's
// header when r did not come through requestIDMiddleware (an integrator
// calling WriteError from a handler of its own).
func logContext(w http.ResponseWriter, r *http.Request) context.Context {
	ctx := r.Context()
	if ports.RequestID(ctx) == "" {
		if id := headerRequestID(w); id != "" {
			ctx = ports.WithRequestID(ctx, id)
		}
	}
	return ctx
}
