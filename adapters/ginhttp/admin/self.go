package admin

import (
	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// mySessions is GET /auth/sessions: the caller's own live sessions, the
// one of the presented token marked current.
func (r *routes) mySessions(c *gin.Context) error {
	p, lp, err := parseSessionPage(c.Request.URL.RawQuery)
	if err != nil {
		return err
	}
	list, err := r.o.Self.Sessions(c.Request.Context(), web.Actor(c), p)
	if err != nil {
		return err
	}
	current := list.Current
	if current == "" {
		current = "-" // every session is marked, none current
	}
	return writeSessions(c, list, lp, current)
}

// revokeMySession is DELETE /auth/sessions/<id>: sign out one of the
// caller's devices.
func (r *routes) revokeMySession(c *gin.Context) error {
	return done(c, r.o.Self.RevokeSession(c.Request.Context(), web.Actor(c), c.Param("id")))
}

// changePassword is POST /auth/password {currentPassword, newPassword}.
func (r *routes) changePassword(c *gin.Context) error {
	body, err := web.Decode(r.s.Host, c, changePasswordTable)
	if err != nil {
		return err
	}
	if !body.NewPassword.Given {
		return domain.InvalidField("newPassword", "is required")
	}
	return done(c, r.o.Self.ChangePassword(c.Request.Context(), application.ChangePasswordInput{Actor: web.Actor(c),
		CurrentPassword: body.CurrentPassword.Value, NewPassword: body.NewPassword.Value, ClientAddr: web.Client(c).Address}))
}
