package application

import (
	"errors"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// errInvisible marks an entry that exists but that the actor may not see;
// use cases answer it as domain.ErrCacheNotFound.
var errInvisible = errors.New("entry invisible to the caller")

// mayChange checks that actor may see cur (else errInvisible) and that
// pre holds for it, before a write changes it.
func mayChange(actor domain.Actor, st *Assignment, pre Preconditions, cur domain.Entry) error {
	if !canSee(actor, st, cur) {
		return errInvisible
	}
	return pre.check(cur)
}

// admit checks that actor may use store at all.
func admit(actor domain.Actor, st *Assignment) error {
	if actor.IsSystem() || st.Policy == domain.PolicyPublic {
		return nil
	}
	if !actor.Authenticated() {
		return domain.ErrUnauthenticated
	}
	return nil
}

// ownerFilter returns the assignee an owner-policy actor is confined to, or
// "" when the actor may see every assignee.
func ownerFilter(actor domain.Actor, st *Assignment) string {
	if st.Policy == domain.PolicyOwner && actor.Authenticated() {
		return strings.ToLower(actor.Principal.ID)
	}
	return ""
}

// canSee reports whether actor may see e.
func canSee(actor domain.Actor, st *Assignment, e domain.Entry) bool {
	owner := ownerFilter(actor, st)
	return owner == "" || owner == e.AssigneeID
}

// mayAssign checks that actor may write an entry for assigneeID.
func mayAssign(actor domain.Actor, st *Assignment, assigneeID string) error {
	owner := ownerFilter(actor, st)
	if owner != "" && owner != assigneeID {
		return domain.ErrForbidden
	}
	return nil
}
