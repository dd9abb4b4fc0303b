package authfx

import (
	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/ports"
)

// adminDeps are what the admin API and self-service need (docs/admin.md).
type adminDeps struct {
	fx.In
	Users   ports.UserRepository
	Refresh ports.RefreshStore
	Clock   ports.Clock
	Audit   ports.AuditLog `optional:"true"`
	UA      *application.UserAdmin
	Login   *application.Login
	Revoked *background.RevokedSessions
}

// adminServices are the admin API's use cases.
type adminServices struct {
	fx.Out
	Check *application.AdminCheck
	Users *application.AdminUsers
	Audit *application.AdminAudit
	Self  *application.SelfService
}

// newAdmin builds the admin check (the store's admin flag, cached at
// most a second), the admin use cases and self-service. Without an audit
// log the audit routes are left out (Audit nil).
func newAdmin(d adminDeps) (adminServices, error) {
	var out adminServices
	var err error
	if out.Check, err = application.NewAdminCheck(d.Users, d.Clock); err != nil {
		return out, err
	}
	if out.Users, err = application.NewAdminUsers(d.UA, out.Check, d.Refresh, revocations(d.Revoked)); err != nil {
		return out, err
	}
	if d.Audit != nil {
		if out.Audit, err = application.NewAdminAudit(d.Audit, d.Clock); err != nil {
			return out, err
		}
	}
	out.Self, err = application.NewSelfService(d.Login, d.UA, d.Refresh, revocations(d.Revoked))
	return out, err
}
