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
func (r *routes) listEntries(c *gin.Context) { r.cache.ListAs(c, domain.System()) }

// The admin API's routes on one entry of any assignee (docs/admin.md,
// "Entries of any assignee"): the bodies, the answers and the
// preconditions of /cache/<assignment>/<id>, run as the system actor by
// application.AdminEntries, which records each change with the acting
// admin.

// getEntry is GET /admin/cache/<assignment>/<id>.
func (r *routes) getEntry(c *gin.Context) {
	a, ok := r.cache.Assignment(c)
	if !ok {
		return
	}
	e, err := r.o.Entries.Get(c.Request.Context(), a, c.Param("id"))
	r.cache.Answer(c, http.StatusOK, e, err)
}

// replaceEntry is PUT /admin/cache/<assignment>/<id>: replaces an
// existing entry, never creates one.
func (r *routes) replaceEntry(c *gin.Context) {
	a, ok := r.cache.Assignment(c)
	if !ok {
		return
	}
	in, err := r.cache.Input(c)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	pre, err := r.cache.Preconditions(c, a, domain.System())
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	e, err := r.o.Entries.Replace(c.Request.Context(), web.Actor(c), a, c.Param("id"), in, pre)
	r.cache.Answer(c, http.StatusOK, e, err)
}

// deleteEntry is DELETE /admin/cache/<assignment>/<id>: 200 with the
// entry as deleted, as DELETE /cache/<assignment>/<id>.
func (r *routes) deleteEntry(c *gin.Context) {
	a, ok := r.cache.Assignment(c)
	if !ok {
		return
	}
	pre, err := r.cache.Preconditions(c, a, domain.System())
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	e, err := r.o.Entries.Delete(c.Request.Context(), web.Actor(c), a, c.Param("id"), pre)
	r.cache.Answer(c, http.StatusOK, e, err)
}
