package ports

import (
	"context"
	"log/slog"
	"time"
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
// attribute: one line of any layer can then be tied to its request.
// Wrapping an already wrapped handler returns it unchanged.
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

// clientAddrKey is the context key of the client address.
type clientAddrKey struct{}

// WithClientAddr returns ctx carrying the client address of the request
// being served, as the driving adapter determined it (trusted proxies).
// The use cases take the client as an input (domain.Actor.Client,
// application.LoginInput); only the refresh use case, whose input is the
// token alone, reads it here.
func WithClientAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

// ClientAddr returns the client address ctx carries, or "".
func ClientAddr(ctx context.Context) string {
	a, _ := ctx.Value(clientAddrKey{}).(string)
	return a
}

// userAgentKey is the context key of the client's user agent.
type userAgentKey struct{}

// WithUserAgent returns ctx carrying the User-Agent of the request being
// served, which a session records at refresh (docs/admin.md); login takes
// it as an input.
func WithUserAgent(ctx context.Context, ua string) context.Context {
	return context.WithValue(ctx, userAgentKey{}, ua)
}

// UserAgent returns the user agent ctx carries, or "".
func UserAgent(ctx context.Context) string {
	a, _ := ctx.Value(userAgentKey{}).(string)
	return a
}

// callerKey is the context key of the caller's identity.
type callerKey struct{}

// WithCaller returns ctx carrying the identity of whoever the request is
// served for ("user:<subject>" for an authenticated user, "address:<ip>"
// for an anonymous client), which driving adapters set so that storage
// can share its resources fairly between callers (a bound on one
// caller's concurrent statements). It is a fairness key, not an
// authorisation: access is decided by the actor in each use case's input.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// Caller returns the caller ctx carries, or "" (a background task, or an
// in-process call that named none).
func Caller(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

// CallerBudget is each caller's budget of database time on this replica
// (README.md, "Fair share"): storage charges what a caller's calls take,
// and a driving adapter refuses the caller's next request while its
// budget is spent.
type CallerBudget interface {
	// Spent returns how long until caller (as Caller names it) has
	// database time again: zero while it has some.
	Spent(caller string) time.Duration
}
