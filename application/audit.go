package application

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditTrail is the audit service: it records the security events of the
// audit trail (README.md, "Audit trail") and reads them back for the
// command line and the admin API (audit_trail.go). Each event recorded is
// stored in the ports.AuditLog, logged as one line and counted
// (ports.Metrics.AuditEvent), with its id, time and request id
// (ports.RequestID) filled in. Recording never fails the operation it
// records: a store failure is logged. A nil *AuditTrail records nothing. No
// event carries a password or a token.
//
// Events that record a change of a store are written in the change's
// transaction when the stores write into this trail's AuditLog
// (AuditTrailDeps.StoredWithChanges); otherwise right after the change
// succeeded, so a crash between the two loses the event (ARCHITECTURE.md,
// "Threat model").
//
// Failed and throttled logins are folded (AuditTrailDeps.Fold) when the
// AuditLog is a ports.AuditFolder; every attempt is still logged and
// counted.
type AuditTrail struct {
	withChanges bool
	fold        domain.AuditFold
	store       ports.AuditLog
	query       ports.AuditQueryLog // nil: the audit log cannot be queried
	log         *slog.Logger
	metrics     ports.Metrics
	clock       ports.Clock
	ids         ports.IDGenerator
}

// AuditTrailDeps are what the audit trail needs. Store may be nil (events
// are then only logged and counted); so may Log and Metrics.
type AuditTrailDeps struct {
	Store   ports.AuditLog
	Log     *slog.Logger
	Metrics ports.Metrics
	Clock   ports.Clock
	IDs     ports.IDGenerator
	// Fold folds failed and throttled logins; nil means
	// domain.DefaultAuditFold, a zero Window stores each attempt as an
	// event of its own.
	Fold *domain.AuditFold
	// StoredWithChanges tells that the stores write the events of their
	// changes into Store in the transaction of the change
	// (ports.ChangeAuditLog): the use cases then hand those events to the
	// stores (Prepare) and Committed only logs and counts them. Set it only
	// when Store is the stores' own.
	StoredWithChanges bool
}

// NewAuditTrail returns the audit trail; Clock and IDs are required.
func NewAuditTrail(d AuditTrailDeps) *AuditTrail {
	d.Log = cmp.Or(d.Log, slog.New(slog.DiscardHandler))
	fold := domain.DefaultAuditFold
	if d.Fold != nil {
		fold = *d.Fold
	}
	q, _ := d.Store.(ports.AuditQueryLog)
	return &AuditTrail{store: d.Store, query: q, log: d.Log, metrics: metricsOrNop(d.Metrics), clock: d.Clock,
		ids: d.IDs, fold: fold, withChanges: d.StoredWithChanges && d.Store != nil}
}

// Stored reports whether a stores its events, so there is a trail to read.
func (a *AuditTrail) Stored() bool { return a != nil && a.store != nil }

// Record records e, an event that has no change of a store of its own
// (login, throttling, session expiry) or whose change is not given its
// events (refresh reuse): it is stored, logged and counted.
func (a *AuditTrail) Record(ctx context.Context, e domain.AuditEvent) {
	if a == nil {
		return
	}
	e = a.fill(ctx, e)
	a.logAndCount(ctx, e)
	a.store1(ctx, e)
}

// Prepare fills in e (id, time, request id) for a change about to be
// made and returns what the store must append in the change's
// transaction: e when the stores write events (StoredWithChanges),
// otherwise nothing. Pass the filled event to Committed once the change
// committed.
func (a *AuditTrail) Prepare(ctx context.Context, e domain.AuditEvent) (domain.AuditEvent, []domain.AuditEvent) {
	if a == nil {
		return e, nil
	}
	e = a.fill(ctx, e)
	if a.withChanges {
		return e, []domain.AuditEvent{e}
	}
	return e, nil
}

// Committed reports e, filled by Prepare, after its change committed: it
// is logged and counted, and stored unless the store already wrote it in
// the change's transaction.
func (a *AuditTrail) Committed(ctx context.Context, e domain.AuditEvent) {
	if a == nil {
		return
	}
	a.logAndCount(ctx, e)
	if !a.withChanges {
		a.store1(ctx, e)
	}
}

func (a *AuditTrail) fill(ctx context.Context, e domain.AuditEvent) domain.AuditEvent {
	e.ID, e.Time = a.ids.NewID(), domain.Normalize(a.clock.Now())
	e.Username = domain.CutAuditUsername(e.Username)
	e.RequestID = cmp.Or(e.RequestID, ports.RequestID(ctx))
	return e
}

func (a *AuditTrail) logAndCount(ctx context.Context, e domain.AuditEvent) {
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

func (a *AuditTrail) store1(ctx context.Context, e domain.AuditEvent) {
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
