package application

import (
	"context"
	"log/slog"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Auditor records the security events of the audit trail (CONTRACT.md
// section 7): each event is stored in the ports.AuditLog, logged as one
// line (with the request id, which the logger takes from ctx) and counted
// (ports.Metrics.AuditEvent). It fills in the id, the time, the request id
// and the client address from ctx (ports.RequestID, ports.ClientAddr).
// Recording never fails the operation it records: a store failure is
// logged. A nil *Auditor records nothing. No event carries a password or
// a token: only ids, names, addresses and reasons.
//
// Where the store offers no transaction spanning the change and its
// event, the event is written right after the change succeeded; a crash
// between the two loses the event (see ARCHITECTURE.md, threat model).
type Auditor struct {
	store   ports.AuditLog
	log     *slog.Logger
	metrics ports.Metrics
	clock   ports.Clock
	ids     ports.IDGenerator
}

// NewAuditor returns an auditor. store may be nil (events are then only
// logged and counted); log and metrics may be nil.
func NewAuditor(store ports.AuditLog, log *slog.Logger, metrics ports.Metrics, clock ports.Clock, ids ports.IDGenerator) *Auditor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Auditor{store: store, log: log, metrics: metricsOrNop(metrics), clock: clock, ids: ids}
}

// Record records e.
func (a *Auditor) Record(ctx context.Context, e domain.AuditEvent) {
	if a == nil {
		return
	}
	e.ID, e.Time = a.ids.NewID(), domain.Normalize(a.clock.Now())
	if e.RequestID == "" {
		e.RequestID = ports.RequestID(ctx)
	}
	if e.Address == "" {
		e.Address = ports.ClientAddr(ctx)
	}
	a.metrics.AuditEvent(string(e.Type))
	attrs := []slog.Attr{slog.String("type", string(e.Type))}
	for _, f := range []struct{ k, v string }{{"userId", e.UserID}, {"username", e.Username}, {"address", e.Address},
		{"family", e.Family}, {"reason", e.Reason}} {
		if f.v != "" {
			attrs = append(attrs, slog.String(f.k, f.v))
		}
	}
	level := slog.LevelInfo
	if e.Type == domain.AuditRefreshReused || e.Type == domain.AuditLoginThrottled || e.Type == domain.AuditKeyRevoked {
		level = slog.LevelWarn
	}
	a.log.LogAttrs(ctx, level, "audit event", attrs...)
	if a.store == nil {
		return
	}
	if err := a.store.RecordEvent(context.WithoutCancel(ctx), e); err != nil {
		a.log.WarnContext(ctx, "store audit event", "type", string(e.Type), "err", err)
	}
}

// AuditPurger returns the sweeper's purger of the events older than
// retention, removed in batches like expired entries.
func AuditPurger(store ports.AuditLog, retention time.Duration) Purger {
	return Purger{Name: "audit", Purge: func(ctx context.Context, now time.Time, limit int) (int, error) {
		return store.PurgeEvents(ctx, now.Add(-retention), limit)
	}}
}
