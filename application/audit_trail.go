package application

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditQuery selects events; zero fields select everything.
type AuditQuery struct {
	Username string
	Type     domain.AuditType
	// Since keeps the events of the last Since.
	Since time.Duration
	Limit int
}

// List returns the events q selects, newest first. An unknown type or a
// negative duration is a validation error.
func (a *AuditTrail) List(ctx context.Context, q AuditQuery) ([]domain.AuditEvent, error) {
	if !a.Stored() {
		return nil, domain.ErrNotImplemented
	}
	if q.Type != "" && !q.Type.Valid() {
		return nil, domain.InvalidField("type", fmt.Sprintf("must be one of %v", domain.AuditTypes()))
	}
	if q.Since < 0 {
		return nil, domain.InvalidField("since", "must not be negative")
	}
	f := ports.AuditFilter{Username: q.Username, Type: q.Type, Limit: q.Limit}
	if q.Since > 0 {
		f.Since = a.clock.Now().Add(-q.Since)
	}
	events, err := a.store.Events(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return events, nil
}

// AuditPageInput selects a page of the audit trail.
type AuditPageInput struct {
	// Filter selects the events, on domain.AuditFields; the zero Filter
	// selects every one.
	Filter domain.Filter
	// Limit is 1 to 1000; zero means 100.
	Limit int
	// Before continues after the last event of the previous page.
	Before ports.AuditCursor
}

// MaxAuditPage is the most events one page of GET /admin/audit holds.
const MaxAuditPage = 1000

// Page returns the events in selects, newest first, and the cursor of
// the next page (nil on the last). A filter beyond the query limits
// (domain.ValidateFilter) or a limit out of range is a validation error;
// domain.ErrNotImplemented when the audit log cannot be queried.
func (a *AuditTrail) Page(ctx context.Context, in AuditPageInput) ([]domain.AuditEvent, *ports.AuditCursor, error) {
	if err := domain.ValidateFilter("query", in.Filter); err != nil {
		return nil, nil, err
	}
	in.Limit = cmp.Or(in.Limit, 100)
	if in.Limit < 1 || in.Limit > MaxAuditPage {
		return nil, nil, domain.InvalidField("limit", "must be between 1 and 1000")
	}
	if a.query == nil {
		return nil, nil, domain.ErrNotImplemented
	}
	// One more than asked tells whether a next page exists.
	events, err := a.query.QueryEvents(ctx, ports.AuditQuery{Filter: in.Filter, Before: in.Before, Limit: in.Limit + 1})
	if err != nil {
		return nil, nil, fmt.Errorf("query audit events: %w", err)
	}
	if len(events) <= in.Limit {
		return events, nil, nil
	}
	events = events[:in.Limit]
	last := events[len(events)-1]
	return events, &ports.AuditCursor{Time: last.Time, ID: last.ID}, nil
}

// AuditWatchOverlap is how far back each read of a watch looks before
// the newest event it has seen, so that an event committed a little after
// the time it carries is still delivered; delivered ones are skipped by id.
const AuditWatchOverlap = 10 * time.Second

// AuditWatch delivers the events recorded after it started, by any
// replica sharing the store, each once, oldest first. It is not safe for
// concurrent use.
type AuditWatch struct {
	a     *AuditTrail
	since time.Time
	seen  map[string]time.Time
}

// Watch starts a watch at now: the events already stored are marked
// delivered.
func (a *AuditTrail) Watch(ctx context.Context) (*AuditWatch, error) {
	if a.query == nil {
		return nil, domain.ErrNotImplemented
	}
	w := &AuditWatch{a: a, since: domain.Normalize(a.clock.Now()), seen: map[string]time.Time{}}
	if _, err := w.Next(ctx); err != nil {
		return nil, fmt.Errorf("start the audit watch: %w", err)
	}
	return w, nil
}

// Next returns the events stored since the last call that this watch has
// not delivered, oldest first.
func (w *AuditWatch) Next(ctx context.Context) ([]domain.AuditEvent, error) {
	from := w.since.Add(-AuditWatchOverlap)
	events, err := w.a.query.QueryEvents(ctx, ports.AuditQuery{Filter: ports.AuditFilter{Since: from}.Where(), Limit: MaxAuditPage})
	if err != nil {
		return nil, err
	}
	var out []domain.AuditEvent
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if _, ok := w.seen[e.ID]; ok || e.Time.Before(w.since.Add(-AuditWatchOverlap)) {
			continue
		}
		w.seen[e.ID] = e.Time
		out = append(out, e)
		if e.Time.After(w.since) {
			w.since = e.Time
		}
	}
	for id, t := range w.seen {
		if t.Before(w.since.Add(-2 * AuditWatchOverlap)) {
			delete(w.seen, id)
		}
	}
	return out, nil
}
