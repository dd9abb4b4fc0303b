package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditLog is an in-memory ports.AuditLog, safe for concurrent use.
type AuditLog struct {
	mu     sync.Mutex
	events []domain.AuditEvent
}

var _ ports.AuditLog = (*AuditLog)(nil)

// NewAuditLog returns an empty audit log.
func NewAuditLog() *AuditLog { return &AuditLog{} }

// RecordEvent stores e, its time in UTC at microsecond precision.
func (l *AuditLog) RecordEvent(_ context.Context, e domain.AuditEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Time = authTime(e.Time)
	l.events = append(l.events, e)
	return nil
}

// appendEvents stores es; the caller may hold its own lock (the audit
// log's is always taken last), which makes es part of its change.
func (l *AuditLog) appendEvents(es []domain.AuditEvent) {
	if len(es) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range es {
		e.Time = authTime(e.Time)
		l.events = append(l.events, e)
	}
}

// eventsSink checks that events given to a store's change can be stored,
// as a database would before committing: there is an audit log to take
// them (SetAuditLog) and their ids are new. Otherwise the change fails,
// changing nothing.
func eventsSink(l *AuditLog, op string, es []domain.AuditEvent) error {
	if len(es) == 0 {
		return nil
	}
	if l == nil {
		return fmt.Errorf("memstore: %s: audit events given but no audit log attached (SetAuditLog)", op)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range es {
		if slices.ContainsFunc(l.events, func(s domain.AuditEvent) bool { return s.ID == e.ID }) {
			return fmt.Errorf("memstore: %s: audit event id %q is already stored", op, e.ID)
		}
	}
	return nil
}

// Events returns the events f selects, newest first.
func (l *AuditLog) Events(_ context.Context, f ports.AuditFilter) ([]domain.AuditEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	since, user := authTime(f.Since), domain.NormalizeUsername(f.Username)
	var out []domain.AuditEvent
	for _, e := range l.events {
		if (f.Type == "" || e.Type == f.Type) && (user == "" || domain.NormalizeUsername(e.Username) == user) &&
			(f.Since.IsZero() || !e.Time.Before(since)) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b domain.AuditEvent) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// PurgeEvents removes at most limit events older than before.
func (l *AuditLog) PurgeEvents(_ context.Context, before time.Time, limit int) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before = authTime(before)
	removed := 0
	l.events = slices.DeleteFunc(l.events, func(e domain.AuditEvent) bool {
		if removed < limit && e.Time.Before(before) {
			removed++
			return true
		}
		return false
	})
	return removed, nil
}
