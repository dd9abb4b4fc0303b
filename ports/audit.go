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
//
// Events that record a change of a store (user added, disabled, enabled,
// password changed; logout; refresh reuse; key rotated, revoked) are
// written by that store in the transaction of the change (the events
// parameter of UserRepository.CreateUser, UpdateUser and
// UpdateUserEndingSessions, RefreshStore.RevokeFamily and RotateRefresh,
// KeyStore.AddSigningKey and RevokeSigningKey) when the AuditLog in use is
// the store's own (bunstore: the auth_events table of the same database;
// memstore: the AuditLog attached with the stores' SetAuditLog). With any
// other AuditLog (an embedder's) the
// stores are given no events, and application.Auditor calls RecordEvent
// after the change committed.
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

// ChangeAuditLog names the AuditLog the stores of a wiring write the
// events of their changes into, in the change's transaction (see
// AuditLog). The auditor hands events to the stores only when the
// AuditLog in use is this very log; an AuditLog replaced by an embedder
// is not, and receives every event through RecordEvent instead.
type ChangeAuditLog struct{ Log AuditLog }
