package application

import (
	"context"
	"log/slog"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Auditor records the security events of the audit trail (README.md,
// "Audit trail"): each event is stored in the ports.AuditLog, logged as one
// line (with the request id, which the logger takes from ctx) and counted
// (ports.Metrics.AuditEvent). It fills in the id, the time, the request id
// and the client address from ctx (ports.RequestID, ports.ClientAddr).
// Recording never fails the operation it records: a store failure is
// logged. A nil *Auditor records nothing. No event carries a password or
// a token: only ids, names, addresses and reasons.
//
// Events that record a change of a store are written in the change's
// transaction when the stores write into this auditor's AuditLog
// (SetStoredWithChanges, see ports.AuditLog); otherwise, and for events
// with no change of their own, right after the change succeeded, so a
// crash between the two loses the event (ARCHITECTURE.md, threat model).
//
// Failed and throttled logins are folded (domain.AuditFold, by default
// domain.DefaultAuditFold; SetFold) when the AuditLog is a
// ports.AuditFolder: a flood of them grows the trail by a bounded number
// of rows a window. Every attempt is still logged and counted. Usernames
// are cut to domain.MaxAuditUsernameLen characters.
type Auditor struct {
	withChanges bool
	fold        domain.AuditFold
	store       ports.AuditLog
	log         *slog.Logger
	metrics     ports.Metrics
	clock       ports.Clock
	ids         ports.IDGenerator
}

// NewAuditor returns an auditor. store may be nil (events are then only
// logged and counted); log and metrics may be nil.
func NewAuditor(store ports.AuditLog, log *slog.Logger, metrics ports.Metrics, clock ports.Clock, ids ports.IDGenerator) *Auditor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Auditor{store: store, log: log, metrics: metricsOrNop(metrics), clock: clock, ids: ids,
		fold: domain.DefaultAuditFold}
}

// SetFold sets the rule that folds failed and throttled logins; a zero
// Window stores each attempt as an event of its own. Call it before use.
func (a *Auditor) SetFold(f domain.AuditFold) {
	if a != nil {
		a.fold = f
	}
}

// SetStoredWithChanges tells a that the stores write the events of their
// changes (user added / disabled / enabled / password changed, logout,
// key rotated / revoked, refresh reuse) into a's AuditLog in the
// transaction of the change: the use cases then
// hand those events to the stores (Prepare) and Committed only logs and
// counts them. Call it before use, only when the AuditLog is the stores'
// own (bootstrap does so when the graph's ports.AuditLog is the default
// one of the store module; an embedder's AuditLog keeps receiving every
// event through RecordEvent, after the change committed).
func (a *Auditor) SetStoredWithChanges(on bool) {
	if a != nil {
		a.withChanges = on
	}
}

// Record records e, an event that has no change of a store of its own
// (login, throttling, session expiry) or whose change is not given its
// events (refresh reuse): it is stored, logged and counted.
func (a *Auditor) Record(ctx context.Context, e domain.AuditEvent) {
	if a == nil {
		return
	}
	e = a.fill(ctx, e)
	a.logAndCount(ctx, e)
	a.store1(ctx, e)
}

// Prepare fills in e (id, time, request id, client address) for a change
// about to be made and returns what the store must append in the change's
// transaction: e when the stores write events (SetStoredWithChanges),
// otherwise nothing. Pass the filled event to Committed once the change
// committed.
func (a *Auditor) Prepare(ctx context.Context, e domain.AuditEvent) (domain.AuditEvent, []domain.AuditEvent) {
	if a == nil {
		return e, nil
	}
	e = a.fill(ctx, e)
	if a.withChanges && a.store != nil {
		return e, []domain.AuditEvent{e}
	}
	return e, nil
}

// Committed reports e, filled by Prepare, after its change committed: it
// is logged and counted, and stored unless the store already wrote it in
// the change's transaction.
func (a *Auditor) Committed(ctx context.Context, e domain.AuditEvent) {
	if a == nil {
		return
	}
	a.logAndCount(ctx, e)
	if !a.withChanges {
		a.store1(ctx, e)
	}
}

func (a *Auditor) fill(ctx context.Context, e domain.AuditEvent) domain.AuditEvent {
	e.ID, e.Time = a.ids.NewID(), domain.Normalize(a.clock.Now())
	e.Username = domain.CutAuditUsername(e.Username)
	if e.RequestID == "" {
		e.RequestID = ports.RequestID(ctx)
	}
	if e.Address == "" {
		e.Address = ports.ClientAddr(ctx)
	}
	return e
}

func (a *Auditor) logAndCount(ctx context.Context, e domain.AuditEvent) {
	a.metrics.AuditEvent(string(e.Type))
	attrs := []slog.Attr{slog.String("type", string(e.Type))}
	for _, f := range []struct{ k, v string }{{"userId", e.UserID}, {"username", e.Username}, {"address", e.Address},
		{"family", e.Family}, {"reason", e.Reason}, {"actorId", e.ActorID}, {"actor", e.ActorUsername}, {"detail", e.Detail}} {
		if f.v != "" {
			attrs = append(attrs, slog.String(f.k, f.v))
		}
	}
	level := slog.LevelInfo
	if e.Type == domain.AuditRefreshReused || e.Type == domain.AuditLoginThrottled || e.Type == domain.AuditKeyRevoked {
		level = slog.LevelWarn
	}
	a.log.LogAttrs(ctx, level, "audit event", attrs...)
}

func (a *Auditor) store1(ctx context.Context, e domain.AuditEvent) {
	if a.store == nil {
		return
	}
	detached := context.WithoutCancel(ctx)
	var err error
	if folder, ok := a.store.(ports.AuditFolder); ok && a.fold.Folds(e) {
		err = folder.FoldEvent(detached, e, a.fold)
	} else {
		err = a.store.RecordEvent(detached, e)
	}
	if err != nil {
		a.log.WarnContext(ctx, "store audit event", "type", string(e.Type), "err", err)
	}
}
