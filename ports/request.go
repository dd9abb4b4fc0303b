package ports

import (
	"context"
	"log/slog"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// requestIDKey is the context key of the request id.
type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request being served,
// which driving adapters set (ginhttp: X-Request-Id) so that every layer
// below can log it and the audit trail can record it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// RequestIDAttr is the attribute a log line carries its request id under.
const RequestIDAttr = "request_id"

// LogRequestIDs wraps h so that every record logged with a context that
// carries a request id (slog's …Context methods) gets a request_id
// attribute. Wrapping an already wrapped handler returns it unchanged.
func LogRequestIDs(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String(RequestIDAttr, id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// CallerBudget is each caller's budget of database time on this replica
// (README.md, "Fair share"): storage charges what a caller's calls take,
// and a driving adapter refuses the caller's next request while its
// budget is spent.
type CallerBudget interface {
	// Spent returns how long until caller has database time again: zero
	// while it has some.
	Spent(caller domain.Caller) time.Duration
}
