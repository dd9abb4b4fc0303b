package bunstore

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// auditDDL creates auth_events: one row per security event (CONTRACT.md
// section 7), username_norm for --user, indexes for the newest-first
// listing and for retention.
func auditDDL(db bun.IDB) []string {
	text, tm := textColumnType(db), timeColumnType(db)
	return []string{
		`CREATE TABLE IF NOT EXISTS auth_events (
			id ` + text + ` NOT NULL,
			"at" ` + tm + ` NOT NULL,
			type ` + text + ` NOT NULL,
			user_id ` + text + ` NOT NULL,
			username ` + text + ` NOT NULL,
			username_norm ` + text + ` NOT NULL,
			address ` + text + ` NOT NULL,
			request_id ` + text + ` NOT NULL,
			family ` + text + ` NOT NULL,
			reason ` + text + ` NOT NULL,
			CONSTRAINT auth_events_pkey PRIMARY KEY (id)
		)`,
		`CREATE INDEX IF NOT EXISTS auth_events_at_idx ON auth_events ("at", id)`,
		`CREATE INDEX IF NOT EXISTS auth_events_user_at_idx ON auth_events (username_norm, "at")`,
	}
}

// AuditLog is the ports.AuditLog of the auth_events table.
type AuditLog struct {
	db     *bun.DB
	bounds bounds
}

var _ ports.AuditLog = (*AuditLog)(nil)

// NewAuditLog returns the audit log over db, which must come from Open and
// have been migrated.
func NewAuditLog(db *bun.DB, opts ...RepoOption) *AuditLog {
	return &AuditLog{db: db, bounds: newBounds(opts)}
}

// RecordEvent stores e.
func (l *AuditLog) RecordEvent(ctx context.Context, e domain.AuditEvent) (err error) {
	ctx, done := l.bounds.enter(ctx)
	defer done(&err)
	return insertEvents(ctx, l.db, []domain.AuditEvent{e})
}

// insertEvents stores es through db, a transaction when the events belong
// to a change (the stores' events parameters, see ports.AuditLog).
func insertEvents(ctx context.Context, db bun.IDB, es []domain.AuditEvent) error {
	for _, e := range es {
		_, err := db.ExecContext(ctx, `INSERT INTO auth_events
		(id, "at", type, user_id, username, username_norm, address, request_id, family, reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, timeArg(e.Time), string(e.Type), e.UserID, e.Username, domain.NormalizeUsername(e.Username),
			e.Address, e.RequestID, e.Family, e.Reason)
		if err != nil {
			return dbError("record audit event", err)
		}
	}
	return nil
}

// Events returns the events f selects, newest first.
func (l *AuditLog) Events(ctx context.Context, f ports.AuditFilter) (_ []domain.AuditEvent, err error) {
	ctx, done := l.bounds.enter(ctx)
	defer done(&err)
	var (
		where []string
		args  []any
	)
	if f.Username != "" {
		where, args = append(where, "username_norm = ?"), append(args, domain.NormalizeUsername(f.Username))
	}
	if f.Type != "" {
		where, args = append(where, "type = ?"), append(args, string(f.Type))
	}
	if !f.Since.IsZero() {
		where, args = append(where, `"at" >= ?`), append(args, timeArg(f.Since))
	}
	q := `SELECT id, "at", type, user_id, username, address, request_id, family, reason FROM auth_events`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	rows, err := l.db.QueryContext(ctx, q+` ORDER BY "at" DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, dbError("list audit events", err)
	}
	defer rows.Close()
	var out []domain.AuditEvent
	for rows.Next() {
		var (
			e  domain.AuditEvent
			at nullTime
			ty string
		)
		if err := rows.Scan(&e.ID, &at, &ty, &e.UserID, &e.Username, &e.Address, &e.RequestID, &e.Family, &e.Reason); err != nil {
			return nil, dbError("list audit events", err)
		}
		e.Time, e.Type = at.Time, domain.AuditType(ty)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError("list audit events", err)
	}
	return out, nil
}

// PurgeEvents removes at most limit events older than before, oldest
// first; replicas purging together take disjoint batches on PostgreSQL.
func (l *AuditLog) PurgeEvents(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	ctx, done := l.bounds.enter(ctx)
	defer done(&err)
	if limit < 1 {
		return 0, nil
	}
	res, err := l.db.ExecContext(ctx, `DELETE FROM auth_events WHERE id IN (
		SELECT id FROM auth_events WHERE "at" < ? ORDER BY "at" LIMIT ?`+skipLocked(l.db)+`)`, timeArg(before), limit)
	if err != nil {
		return 0, dbError("purge audit events", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbError("purge audit events", err)
	}
	return int(n), nil
}
