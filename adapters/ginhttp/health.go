package ginhttp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// ReadyTimeout bounds how long GET /readyz waits for Options.Ready.
const ReadyTimeout = 2 * time.Second

var statusOK = []byte(`{"status":"ok"}`)

// healthz answers 200 while the process serves requests.
func (s *Server) healthz(c *gin.Context) { writeJSON(c, http.StatusOK, statusOK) }

// readyz answers 200 when the readiness check answers within ReadyTimeout,
// else 503 in the error envelope. The check's error is logged (at Warn),
// never sent. A check that ignores its context is abandoned at the
// deadline rather than holding the request.
func (s *Server) readyz(c *gin.Context) {
	if s.ready == nil {
		writeJSON(c, http.StatusOK, statusOK)
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
		err = ctx.Err()
	}
	if err != nil {
		s.log.LogAttrs(c.Request.Context(), slog.LevelWarn, "not ready", slog.String("err", err.Error()))
		s.writeError(c, errNotReady)
		return
	}
	writeJSON(c, http.StatusOK, statusOK)
}
