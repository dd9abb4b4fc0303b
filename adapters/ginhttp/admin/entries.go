package admin

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// listEntries is GET /admin/cache/<assignment>: the cache list of every
// assignee, the same query language and answer as GET /cache/<a>, run
// as the trusted system actor (no owner restriction) once the admin
// check passed.
func (r *routes) listEntries(c *gin.Context, a string) error {
	return r.cache.ListAs(c, a, domain.System())
}

// onAssignment runs h for the route's assignment (404 when unknown).
func (r *routes) onAssignment(h func(c *gin.Context, a string) error) func(*gin.Context) error {
	return func(c *gin.Context) error {
		a, err := r.cache.Assignment(c)
		if err != nil {
			return err
		}
		return h(c, a)
	}
}

// The admin API's routes on one entry of any assignee (docs/admin.md,
// "Entries of any assignee"): the bodies, the answers and the
// preconditions of /cache/<assignment>/<id>, run as the system actor by
// application.AdminEntries, which records each change with the acting
// admin.

// getEntry is GET /admin/cache/<assignment>/<id>.
func (r *routes) getEntry(c *gin.Context, a string) error {
	e, err := r.o.Entries.Get(c.Request.Context(), a, c.Param("id"))
	return r.cache.Answer(c, http.StatusOK, e, err)
}

// replaceEntry is PUT /admin/cache/<assignment>/<id>: replaces an
// existing entry, never creates one.
func (r *routes) replaceEntry(c *gin.Context, a string) error {
	in, err := r.cache.Input(c)
	if err != nil {
		return err
	}
	pre, err := r.cache.Preconditions(c, a, domain.System())
	if err != nil {
		return err
	}
	e, err := r.o.Entries.Replace(c.Request.Context(), web.Actor(c), a, c.Param("id"), in, pre)
	return r.cache.Answer(c, http.StatusOK, e, err)
}

// deleteEntry is DELETE /admin/cache/<assignment>/<id>: 200 with the
// entry as deleted, as DELETE /cache/<assignment>/<id>.
func (r *routes) deleteEntry(c *gin.Context, a string) error {
	pre, err := r.cache.Preconditions(c, a, domain.System())
	if err != nil {
		return err
	}
	e, err := r.o.Entries.Delete(c.Request.Context(), web.Actor(c), a, c.Param("id"), pre)
	return r.cache.Answer(c, http.StatusOK, e, err)
}
