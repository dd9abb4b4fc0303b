package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditLog is an in-memory ports.AuditLog and ports.AuditFolder, safe for
// concurrent use.
type AuditLog struct {
	mu     sync.Mutex
	events []auditRow
}

// auditRow is a stored event and its fold key (domain.AuditFold.Keys; ""
// for an event not folded).
type auditRow struct {
	domain.AuditEvent
	fold string
}

var (
	_ ports.AuditLog    = (*AuditLog)(nil)
	_ ports.AuditFolder = (*AuditLog)(nil)
)

// NewAuditLog returns an empty audit log.
func NewAuditLog() *AuditLog { return &AuditLog{} }

// RecordEvent stores e.
func (l *AuditLog) RecordEvent(_ context.Context, e domain.AuditEvent) error {
	l.appendEvents([]domain.AuditEvent{e})
	return nil
}

// storedEvent is e as the log keeps it: times in UTC at microsecond
// precision, the username cut (domain.CutAuditUsername).
func storedEvent(e domain.AuditEvent) domain.AuditEvent {
	e.Time, e.Username = domain.Normalize(e.Time), domain.CutAuditUsername(e.Username)
	if e.Count <= 1 {
		e.Count, e.LastSeen = 0, time.Time{}
	} else {
		e.LastSeen = domain.Normalize(e.LastSeen)
	}
	return e
}

// FoldEvent stores e folded under f (ports.AuditFolder).
func (l *AuditLog) FoldEvent(_ context.Context, e domain.AuditEvent, f domain.AuditFold) error {
	if !f.Folds(e) {
		return fmt.Errorf("memstore: fold audit event: %s is not folded", e.Type)
	}
	e = storedEvent(e)
	e.Count, e.LastSeen = 0, time.Time{}
	own, shared := f.Keys(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.foldInto(own, e) {
		return nil
	}
	key := own
	if own != shared {
		start := f.Start(e.Time)
		end := start.Add(f.Window)
		n := 0
		for _, r := range l.events {
			if r.fold != "" && r.Type == domain.AuditLoginFailed && r.Address == e.Address &&
				!r.Time.Before(start) && r.Time.Before(end) {
				n++
			}
		}
		if n >= f.Distinct {
			key = shared
		}
	}
	if key == shared && l.foldInto(shared, e) {
		return nil
	}
	l.events = append(l.events, auditRow{AuditEvent: e, fold: key})
	return nil
}

// foldInto folds e into the stored event of key, if there is one.
func (l *AuditLog) foldInto(key string, e domain.AuditEvent) bool {
	for i := range l.events {
		r := &l.events[i]
		if r.fold != key {
			continue
		}
		r.Count = r.Attempts() + 1
		if r.LastSeen.IsZero() {
			r.LastSeen = r.Time
		}
		if e.Time.After(r.LastSeen) {
			r.LastSeen = e.Time
		}
		if domain.NormalizeUsername(r.Username) != domain.NormalizeUsername(e.Username) {
			r.Username = ""
		}
		if r.UserID != e.UserID {
			r.UserID = ""
		}
		if r.Reason != e.Reason {
			r.Reason = ""
		}
		return true
	}
	return false
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
		l.events = append(l.events, auditRow{AuditEvent: storedEvent(e)})
	}
}

// eventsSink checks, as a database would before committing, that events
// given to a store's change can be stored: there is an audit log to take
// them and their ids are new. Otherwise the change fails, changing nothing.
func eventsSink(l *AuditLog, op string, es []domain.AuditEvent) error {
	if len(es) == 0 {
		return nil
	}
	if l == nil {
		return fmt.Errorf("memstore: %s: audit events given but no audit log attached (the store's constructor takes it)", op)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range es {
		if slices.ContainsFunc(l.events, func(s auditRow) bool { return s.ID == e.ID }) {
			return fmt.Errorf("memstore: %s: audit event id %q is already stored", op, e.ID)
		}
	}
	return nil
}

// Events returns the events f selects, newest first.
func (l *AuditLog) Events(ctx context.Context, f ports.AuditFilter) ([]domain.AuditEvent, error) {
	return l.QueryEvents(ctx, ports.AuditQuery{Filter: f.Where(), Limit: f.Limit})
}

// PurgeEvents removes at most limit events older than before.
func (l *AuditLog) PurgeEvents(_ context.Context, before time.Time, limit int) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before = domain.Normalize(before)
	removed := 0
	l.events = slices.DeleteFunc(l.events, func(e auditRow) bool {
		if removed < limit && e.Time.Before(before) {
			removed++
			return true
		}
		return false
	})
	return removed, nil
}
