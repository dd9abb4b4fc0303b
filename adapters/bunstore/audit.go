package bunstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditLog is the ports.AuditLog (and ports.AuditFolder) of the
// auth_events table.
type AuditLog struct {
	db     *DB
	bounds bound.Bounds
	fold   *foldBuffer
}

var (
	_ ports.AuditLog    = (*AuditLog)(nil)
	_ ports.AuditFolder = (*AuditLog)(nil)
)

// NewAuditLog returns the audit log over db, which must come from Open and
// have been migrated.
func NewAuditLog(db *DB) *AuditLog {
	return &AuditLog{db: db, bounds: db.bounds, fold: &foldBuffer{rows: map[string]*foldRow{}}}
}

// RecordEvent stores e.
func (l *AuditLog) RecordEvent(ctx context.Context, e domain.AuditEvent) (err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	return gated(ctx, call, l.db, func() error { return insertEvents(ctx, l.db.sql, []domain.AuditEvent{e}) })
}

// insertEvents stores es through db, a transaction when the events belong
// to a change (the stores' events parameters, see ports.AuditLog).
func insertEvents(ctx context.Context, db bun.IDB, es []domain.AuditEvent) error {
	for _, e := range es {
		_, err := db.ExecContext(ctx, `INSERT INTO auth_events
		(id, "at", type, user_id, username, username_norm, address, request_id, family, reason,
			actor_id, actor_username, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, engine.TimeArg(e.Time), string(e.Type), e.UserID, domain.CutAuditUsername(e.Username),
			domain.NormalizeUsername(domain.CutAuditUsername(e.Username)),
			e.Address, e.RequestID, e.Family, e.Reason, e.ActorID, domain.CutAuditUsername(e.ActorUsername), e.Detail)
		if err != nil {
			return dberr.Wrap("record audit event", err)
		}
	}
	return nil
}

// Events returns the events f selects, newest first.
func (l *AuditLog) Events(ctx context.Context, f ports.AuditFilter) (_ []domain.AuditEvent, err error) {
	return l.QueryEvents(ctx, ports.AuditQuery{Filter: f.Where(), Limit: f.Limit})
}

// QueryEvents returns the events q selects (ports.AuditQueryLog): one
// range of the index on ("at", id), its filter translated by auditWhere.
func (l *AuditLog) QueryEvents(ctx context.Context, aq ports.AuditQuery) (_ []domain.AuditEvent, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	if err := l.flushHeld(ctx, call); err != nil {
		return nil, err
	}
	var b strings.Builder
	args, err := auditWhere(&b, nil, aq.Filter)
	if err != nil {
		return nil, err
	}
	if before := aq.Before; before.ID != "" {
		b.WriteString(` AND ("at" < ? OR ("at" = ? AND id < ?))`)
		args = append(args, engine.TimeArg(before.Time), engine.TimeArg(before.Time), before.ID)
	}
	q := `SELECT id, "at", type, user_id, username, address, request_id, family, reason, attempts, last_at,
		actor_id, actor_username, detail FROM auth_events WHERE ` + b.String()
	rows, err := l.db.sql.QueryContext(ctx, q+` ORDER BY "at" DESC, id DESC LIMIT ?`, append(args, positive(aq.Limit, 1000))...)
	if err != nil {
		return nil, dberr.Wrap("list audit events", err)
	}
	out, err := scanAll(rows, func(s rowScanner) (domain.AuditEvent, error) {
		var (
			e        domain.AuditEvent
			at, last engine.NullTime
			ty       string
			attempts int
		)
		err := s.Scan(&e.ID, &at, &ty, &e.UserID, &e.Username, &e.Address, &e.RequestID, &e.Family, &e.Reason,
			&attempts, &last, &e.ActorID, &e.ActorUsername, &e.Detail)
		e.Time, e.Type = at.Time, domain.AuditType(ty)
		if attempts > 1 {
			e.Count, e.LastSeen = attempts, last.Time
		}
		return e, err
	})
	if err != nil {
		return nil, dberr.Wrap("list audit events", err)
	}
	return out, nil
}

// PurgeEvents removes at most limit events older than before, oldest
// first; replicas purging together take disjoint batches on PostgreSQL.
func (l *AuditLog) PurgeEvents(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	if limit < 1 {
		return 0, nil
	}
	return l.db.exec(ctx, call, "purge audit events", `DELETE FROM auth_events WHERE id IN (
		SELECT id FROM auth_events WHERE "at" < ? ORDER BY "at" LIMIT ?`+l.db.eng.SkipLocked()+`)`, engine.TimeArg(before), limit)
}

// auditColumns are the auth_events columns of domain.AuditFields: a
// username compares with its normalized form, as ports.AuditQueryLog
// says.
var auditColumns = map[domain.QueryField]string{domain.FieldType: "type", domain.FieldUsername: "username_norm",
	domain.FieldAddress: "address", domain.FieldTime: `"at"`}

// auditWhere writes f, a filter on domain.AuditFields, to b as an SQL
// condition with bound parameters appended to args.
func auditWhere(b *strings.Builder, args []any, f domain.Filter) ([]any, error) {
	if f.Kind == domain.FilterCond {
		return auditCondition(b, args, &f.Cond)
	}
	join, empty := " AND ", "1 = 1"
	if f.Kind == domain.FilterAny {
		join, empty = " OR ", "1 = 0"
	}
	if len(f.Subs) == 0 {
		b.WriteString(empty)
		return args, nil
	}
	b.WriteByte('(')
	for i, sub := range f.Subs {
		if i > 0 {
			b.WriteString(join)
		}
		var err error
		if args, err = auditWhere(b, args, sub); err != nil {
			return nil, err
		}
	}
	b.WriteByte(')')
	return args, nil
}

func auditCondition(b *strings.Builder, args []any, c *domain.Condition) ([]any, error) {
	col, ok := auditColumns[c.Field]
	if !ok || c.Fold {
		return nil, fmt.Errorf("audit query: no column for %s", c.Field)
	}
	for _, v := range c.Values {
		if c.Field == domain.FieldTime {
			args = append(args, engine.TimeArg(v.Time))
		} else {
			args = append(args, v.Text)
		}
	}
	b.WriteString(col)
	switch c.Op {
	case domain.OpBetween:
		b.WriteString(" BETWEEN ? AND ?")
	case domain.OpIn, domain.OpNotIn:
		if c.Op == domain.OpNotIn {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (?" + strings.Repeat(", ?", len(c.Values)-1) + ")")
	default:
		op, ok := comparators[c.Op]
		if !ok {
			return nil, fmt.Errorf("audit query: no translation for %s", c.Op)
		}
		b.WriteString(op + "?")
	}
	return args, nil
}
