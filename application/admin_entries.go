package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

// AdminEntries are the admin API's use cases on one entry of any
// assignee (docs/admin.md, "Entries of any assignee"): the cache
// operations run as the trusted system actor, each change recorded in
// the audit trail with the acting admin.
type AdminEntries struct {
	ops   *CacheOperations
	users *Users
}

// NewAdminEntries returns the use cases over ops, recording through the
// audit trail of users (whose store also names the entries' assignees).
func NewAdminEntries(ops *CacheOperations, users *Users) (*AdminEntries, error) {
	if ops == nil || users == nil {
		return nil, errors.New("the admin entry routes need the cache operations and the admin user use cases")
	}
	return &AdminEntries{ops: ops, users: users}, nil
}

// Get returns a live entry of any assignee.
func (a *AdminEntries) Get(ctx context.Context, assignment, id string) (domain.Entry, error) {
	return a.ops.Get.Execute(ctx, GetCacheInput{Assignment: assignment, Actor: domain.System(), ID: id})
}

// Replace replaces an existing entry (entry.updated). It never creates:
// without pre.IfMatch the version read first is required, so an entry
// deleted meanwhile is domain.ErrCacheNotFound and one changed meanwhile
// domain.ErrVersionMismatch; If-None-Match is refused.
func (a *AdminEntries) Replace(ctx context.Context, actor domain.Actor, assignment, id string, in CacheInput, pre Preconditions) (domain.Entry, error) {
	if pre.IfNoneMatchAny {
		return domain.Entry{}, domain.InvalidField("If-None-Match", "is not supported here: the admin API never creates an entry")
	}
	if pre.IfMatch == nil {
		cur, err := a.Get(ctx, assignment, id)
		if err != nil {
			return domain.Entry{}, err
		}
		pre.IfMatch = &cur.Version
	}
	e, _, err := a.ops.Replace.Execute(ctx, ReplaceCacheInput{Assignment: assignment, Actor: domain.System(),
		ID: id, Cache: in, Pre: pre})
	if err != nil {
		return domain.Entry{}, err
	}
	a.record(ctx, actor, domain.AuditEntryUpdated, assignment, e)
	return e, nil
}

// Delete deletes an entry (entry.deleted) and returns it as deleted.
func (a *AdminEntries) Delete(ctx context.Context, actor domain.Actor, assignment, id string, pre Preconditions) (domain.Entry, error) {
	e, err := a.ops.Delete.Execute(ctx, DeleteCacheInput{Assignment: assignment, Actor: domain.System(), ID: id, Pre: pre})
	if err != nil {
		return domain.Entry{}, err
	}
	a.record(ctx, actor, domain.AuditEntryDeleted, assignment, e)
	return e, nil
}

// record writes the event of a change right after it (the cache stores
// take no events), about the entry's assignee.
func (a *AdminEntries) record(ctx context.Context, actor domain.Actor, t domain.AuditType, assignment string, e domain.Entry) {
	ev := byAdmin(actor, domain.AuditEvent{Type: t, UserID: e.AssigneeID,
		Detail: fmt.Sprintf("%s/%s version %d", assignment, e.ID, e.Version)})
	if e.AssigneeID != "" {
		if u, err := a.users.users.UserByID(ctx, e.AssigneeID); err == nil {
			ev.Username = u.Username
		}
	}
	a.users.audit.Record(ctx, ev)
}
