package ports

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// UserDirectory is what a UserRepository may implement besides, for the
// user list and deletion (docs/admin.md); without it those routes answer
// NOT_IMPLEMENTED.
type UserDirectory interface {
	// ListUsers returns every user ordered by username.
	ListUsers(ctx context.Context) ([]domain.User, error)
	// DeleteUser removes the user with id and revokes at now every
	// refresh family of theirs (those of the RefreshStore of the same
	// storage), with the events, in one transaction: all or nothing. It
	// returns domain.ErrUserNotFound, storing nothing, for an unknown id,
	// and domain.ErrLastAdmin for the last active admin (as UpdateUser).
	DeleteUser(ctx context.Context, id string, now time.Time, events ...domain.AuditEvent) error
}

// SessionStore is what a RefreshStore may implement besides: its
// families shown as sessions (docs/admin.md). bunstore's and memstore's
// do; without it the session routes answer NOT_IMPLEMENTED.
type SessionStore interface {
	// UserSessions returns the live sessions of a user at now (neither
	// revoked nor expired), the last used first (of equal times, the
	// greatest id first); none is no error.
	UserSessions(ctx context.Context, userID string, now time.Time) ([]domain.Session, error)
	// Session returns a session by id, revoked or not; an unknown id is
	// domain.ErrSessionNotFound.
	Session(ctx context.Context, id string) (domain.Session, error)
}

// AuditCursor is a position in the newest-first order of the audit
// trail: the events after it are those strictly older (by time, then
// by id).
type AuditCursor struct {
	Time time.Time
	ID   string
}

// AuditQuery selects a page of the audit trail: the events Filter (on
// domain.AuditFields) matches that come after Before (zero: from the
// newest), at most Limit of them (zero: 1000).
type AuditQuery struct {
	Filter domain.Filter
	Before AuditCursor
	Limit  int
}

// AuditQueryLog is what an AuditLog may implement besides, for the admin
// API's audit query (docs/admin.md); bunstore's and memstore's do.
type AuditQueryLog interface {
	// QueryEvents returns the events q selects, newest first (by time,
	// then by id). A username condition compares with the events'
	// usernames as logins compare usernames (domain.NormalizeUsername of
	// the name cut as RecordEvent cuts it); a time condition with the
	// event's Time (a folded event's first attempt).
	QueryEvents(ctx context.Context, q AuditQuery) ([]domain.AuditEvent, error)
}
