package admin

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// allSessionDTO is a session of GET /admin/sessions: a Session with its
// user's name ("" for a user deleted since).
type allSessionDTO struct {
	sessionDTO
	Username string `json:"username"`
}

// allSessions is GET /admin/sessions: every user's live sessions, the
// last used first, paged as the other session lists (docs/admin.md,
// "Sessions").
func (r *routes) allSessions(c *gin.Context) {
	p, lp, err := parseSessionPage(c.Request.URL.RawQuery)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	list, err := r.o.Users.AllSessions(c.Request.Context(), p)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	data := make([]allSessionDTO, len(list.Page))
	for i, s := range list.Page {
		data[i] = allSessionDTO{sessionDTO: toSessionDTO(s.Session), Username: s.Username}
	}
	writeAdminJSON(c, http.StatusOK, newAdminPage(data, list.Total, lp.page, lp.limit))
}
