package authfx

import (
	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/ports"
)

// usersDeps are what user administration needs (docs/admin.md).
type usersDeps struct {
	fx.In
	Users   ports.UserRepository
	Hasher  ports.PasswordHasher
	Clock   ports.Clock
	IDs     ports.IDGenerator
	Refresh ports.RefreshStore
	Audit   *application.AuditTrail
	Revoked *background.RevokedSessions
}

// usersServices are the admin check and user administration.
type usersServices struct {
	fx.Out
	Check *application.AdminCheck
	Users *application.Users
}

// newUsers builds the admin check (the store's admin flag, cached at most
// a second) and user administration. Disabling a user and setting a
// password revoke the user's families through the user repository, in
// the change's transaction, so the repository and the ports.RefreshStore
// must be of one storage (storefx's are).
func newUsers(d usersDeps) (usersServices, error) {
	var out usersServices
	var err error
	if out.Check, err = application.NewAdminCheck(d.Users, d.Clock); err != nil {
		return out, err
	}
	out.Users, err = application.NewUsers(application.UsersDeps{Users: d.Users, Hasher: d.Hasher, Clock: d.Clock,
		IDs: d.IDs, Audit: d.Audit, Check: out.Check, Refresh: d.Refresh, Revoked: revocations(d.Revoked)})
	return out, err
}

// newSelfService builds the routes a signed-in user has over their own
// account.
func newSelfService(login *application.Login, users *application.Users, refresh ports.RefreshStore,
	revoked *background.RevokedSessions) (*application.SelfService, error) {
	return application.NewSelfService(login, users, refresh, revocations(revoked))
}
