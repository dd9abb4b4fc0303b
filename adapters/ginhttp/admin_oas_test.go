package ginhttp

import (
	"log/slog"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/ports"
)

// testUsers returns user administration and its admin check over users
// and refresh, recording nothing.
func testUsers(t *testing.T, users ports.UserRepository, hasher ports.PasswordHasher, clock ports.Clock, ids ports.IDGenerator, refresh ports.RefreshStore) (*application.Users, *application.AdminCheck) {
	t.Helper()
	check, err := application.NewAdminCheck(users, clock)
	if err != nil {
		t.Fatal(err)
	}
	u, err := application.NewUsers(application.UsersDeps{Users: users, Hasher: hasher, Clock: clock, IDs: ids, Check: check, Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	return u, check
}

// oasAdmin builds the admin API's options over the OpenAPI stack's
// stores, so that the stack mounts every documented route.
func oasAdmin(t *testing.T, ua *application.Users, check *application.AdminCheck, login *application.Login, refresh *memstore.RefreshStore, tokens *josejwt.Tokens) *admin.Options {
	t.Helper()
	clock := system.Clock{}
	audit := application.NewAuditTrail(application.AuditTrailDeps{Store: memstore.NewAuditLog(), Clock: clock, IDs: system.UUIDv7{}})
	keys, err := application.NewKeys(tokens, clock, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	self, err := application.NewSelfService(login, ua, refresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &admin.Options{Check: check, Users: ua, Audit: audit, Keys: keys, Self: self}
}
