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
	// Since keeps events at or after it (a folded event by the time of
	// its first attempt, domain.AuditEvent.Time).
	Since time.Time
	// Limit bounds how many are returned; zero means 1000.
	Limit int
}

// Where returns what f selects as a filter on domain.AuditFields, the
// selection AuditQueryLog.QueryEvents takes. A Username or Type no event
// can hold (not UTF-8, a NUL, an unknown type) selects nothing.
func (f AuditFilter) Where() domain.Filter {
	var all []domain.Filter
	for _, c := range []struct {
		field domain.QueryField
		value string
	}{{domain.FieldUsername, domain.CutAuditUsername(f.Username)}, {domain.FieldType, string(f.Type)}} {
		if c.value == "" {
			continue
		}
		cond, err := domain.AuditFields.Condition("filter", c.field, domain.OpEq, false, []string{c.value})
		if err != nil {
			return domain.AnyOf()
		}
		all = append(all, domain.Where(cond))
	}
	if !f.Since.IsZero() {
		all = append(all, domain.Where(domain.Condition{Field: domain.FieldTime, Op: domain.OpGte,
			Values: []domain.QueryValue{{Time: domain.Normalize(f.Since)}}}))
	}
	return domain.AllOf(all...)
}

// AuditLog keeps the audit trail (README.md, "Audit trail"). An embedder
// may provide its own to send events elsewhere.
//
// Events that record a change of a store (the events parameter of
// UserRepository, UserDirectory, RefreshStore and KeyStore methods) are
// appended by that store to its own audit trail in the transaction of the
// change, both stored or neither, when the AuditLog in use is the store's
// own (ChangeAuditLog). With any other AuditLog (an embedder's) the stores
// are given no events, and application.AuditTrail calls RecordEvent after
// the change committed.
type AuditLog interface {
	// RecordEvent stores e, whose ID, Time and Type are set, its
	// username cut to domain.MaxAuditUsernameLen characters
	// (domain.CutAuditUsername).
	RecordEvent(ctx context.Context, e domain.AuditEvent) error
	// Events returns the events f selects, newest first (by time, then by
	// id).
	Events(ctx context.Context, f AuditFilter) ([]domain.AuditEvent, error)
	// PurgeEvents removes at most limit events older than before and
	// returns how many it removed.
	PurgeEvents(ctx context.Context, before time.Time, limit int) (int, error)
}

// ChangeAuditLog names the AuditLog the stores of a wiring write the
// events of their changes into (see AuditLog); an AuditLog replaced by an
// embedder is not it, and receives every event through RecordEvent.
type ChangeAuditLog struct{ Log AuditLog }

// AuditFolder is implemented by an AuditLog that folds repeated login
// attempts (domain.AuditFold); application.AuditTrail hands it the failed and
// throttled logins, and an AuditLog without it receives them one by one
// through RecordEvent.
type AuditFolder interface {
	// FoldEvent stores e, an event f folds (f.Folds(e)) with its ID, Time
	// and Type set and Count zero, under f's rule: when an event of the
	// same own key (f.Keys) is stored, it is updated in place: Count grows
	// by one (a stored single event counts as one), LastSeen becomes the
	// later of its LastSeen (or Time) and e.Time, and its username
	// (compared as logins compare them), user id and reason are emptied
	// when e's differ; its ID, Time, Address and RequestID stay. Otherwise,
	// when the address of a login.failed e has f.Distinct events of failed
	// logins stored in e's window, e folds the same way into the event of
	// the shared key, or starts it; otherwise e is stored as a new event
	// of its own key. The username is cut as RecordEvent cuts it. Attempts
	// racing on one address may start a few more events than f.Distinct
	// in a window, never one per attempt. An implementation may hold the
	// attempts of an event it already updated in memory for a few seconds
	// (bunstore does): Events on the same value includes them; another
	// process sees them within those seconds.
	FoldEvent(ctx context.Context, e domain.AuditEvent, f domain.AuditFold) error
}
