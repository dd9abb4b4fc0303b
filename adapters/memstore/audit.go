package memstore

import (
	"cmp"
	"context"
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
