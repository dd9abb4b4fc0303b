package ginhttp

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// mySessions is GET /auth/sessions: the caller's own live sessions, the
// one of the presented token marked current.
func (r *adminRoutes) mySessions(c *gin.Context) {
	p, lp, err := parseSessionPage(c.Request.URL.RawQuery)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	list, err := r.o.Self.Sessions(c.Request.Context(), actorFrom(c), p)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	current := list.Current
	if current == "" {
		current = "-" // every session is marked, none current
	}
	writeSessions(c, list, lp, current)
}

// revokeMySession is DELETE /auth/sessions/<id>: sign out one of the
// caller's devices.
func (r *adminRoutes) revokeMySession(c *gin.Context) {
	if err := r.o.Self.RevokeSession(c.Request.Context(), actorFrom(c), c.Param("id")); err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// changePassword is POST /auth/password {currentPassword, newPassword}.
func (r *adminRoutes) changePassword(c *gin.Context) {
	var body struct {
		CurrentPassword *string `json:"currentPassword"`
		NewPassword     *string `json:"newPassword"`
	}
	if !r.decodeAdminBody(c, &body) {
		return
	}
	if body.NewPassword == nil {
		r.s.writeError(c, domain.InvalidField("newPassword", "is required"))
		return
	}
	cur := ""
	if body.CurrentPassword != nil {
		cur = *body.CurrentPassword
	}
	err := r.o.Self.ChangePassword(c.Request.Context(), application.ChangePasswordInput{Actor: actorFrom(c),
		CurrentPassword: cur, NewPassword: *body.NewPassword, ClientAddr: clientOf(c).Address})
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
