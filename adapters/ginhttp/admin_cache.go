package ginhttp

import (
	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

// listEntries is GET /admin/cache/<assignment>: the cache list of every
// assignee, the same query language and answer as GET /cache/<a>, run
// as the trusted system actor (no owner restriction) once the admin
// check passed.
func (r *adminRoutes) listEntries(c *gin.Context) {
	cr := r.cache
	a, ok := cr.assignment(c)
	if !ok {
		return
	}
	held, ok := r.s.admit(c, r.s.caps.lists, r.s.caps.tooManyLists)
	if !ok {
		return
	}
	defer held.release()
	def, max := cr.uc.List.Limits()
	q, err := toListInput(c.Request.URL.RawQuery, def, max)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	in := q.in
	in.Assignment, in.Actor = a, domain.System()
	bp := getBuf()
	defer putBuf(bp)
	w := &listStream{c: c, buf: bp, paged: q.paged, fields: q.fields}
	out, err := cr.uc.List.Stream(c.Request.Context(), in, w.entry)
	if err != nil {
		cr.failList(w, err)
		return
	}
	w.finish(out.Total, q.page, out.Limit)
}
