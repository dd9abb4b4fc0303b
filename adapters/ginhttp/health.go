package ginhttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// ReadyTimeout bounds how long GET /readyz waits for Options.Ready.
const ReadyTimeout = 2 * time.Second

// checkGrace is how long readyz waits, past ReadyTimeout, for a check
// that honours its context to return its own error.
const checkGrace = 100 * time.Millisecond

var statusOK = []byte(`{"status":"ok"}`)

// healthz answers 200 while the process serves requests.
func (s *Server) healthz(c *gin.Context) { web.WriteJSON(c, http.StatusOK, statusOK) }

// readyz answers 200 when the readiness check answers within ReadyTimeout,
// else 503, whose errorCode says why when the check knows
// (DATABASE_UNAVAILABLE, STORAGE_FULL: no traffic to a replica whose
// writes fail), else NOT_READY. The check's error is logged at Warn,
// repeated ones once per web.OutageLogInterval, never sent; a check that
// ignores its context is abandoned at the deadline.
func (s *Server) readyz(c *gin.Context) {
	if s.ready == nil {
		web.WriteJSON(c, http.StatusOK, statusOK)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), ReadyTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.ready.Ping(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// A check that honours ctx answers at once, with its reason
		// (DATABASE_UNAVAILABLE); one that does not is abandoned.
		select {
		case err = <-done:
		case <-time.After(checkGrace):
			err = ctx.Err()
		}
	}
	if err != nil {
		if n, ok := s.outages.Admit("readyz\x00"+err.Error(), time.Now()); ok {
			attrs := []slog.Attr{slog.String("err", err.Error())}
			if n > 0 {
				attrs = append(attrs, slog.Int64("repeated", n), slog.Duration("over", web.OutageLogInterval))
			}
			s.log.LogAttrs(c.Request.Context(), slog.LevelWarn, "not ready", attrs...)
		}
		notReady := &web.ProtocolError{Status: http.StatusServiceUnavailable, Code: "NOT_READY", Message: "Service Unavailable"}
		var de *domain.Error
		if errors.As(err, &de) && (de.Kind == domain.KindUnavailable || de.Kind == domain.KindStorageFull) {
			notReady = &web.ProtocolError{Status: http.StatusServiceUnavailable, Code: de.Code, Message: de.Message}
		}
		s.errs.Fail(c, notReady)
		return
	}
	web.WriteJSON(c, http.StatusOK, statusOK)
}
