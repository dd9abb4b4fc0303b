package ports

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// AuditFilter selects audit events. Zero fields select everything.
type AuditFilter struct {
	// Username matches events of that username (compared as logins
	// compare usernames, domain.NormalizeUsername).
	Username string
	Type     domain.AuditType
	// Since keeps events at or after it.
	Since time.Time
	// Limit bounds how many are returned; zero means 1000.
	Limit int
}

// AuditLog keeps the audit trail (CONTRACT.md section 7). An embedder may
// provide its own to send events elsewhere.
type AuditLog interface {
	// RecordEvent stores e, whose ID, Time and Type are set.
	RecordEvent(ctx context.Context, e domain.AuditEvent) error
	// Events returns the events f selects, newest first (by time, then by
	// id).
	Events(ctx context.Context, f AuditFilter) ([]domain.AuditEvent, error)
	// PurgeEvents removes at most limit events older than before and
	// returns how many it removed.
	PurgeEvents(ctx context.Context, before time.Time, limit int) (int, error)
}
