package ginhttp

import (
	"log/slog"
	"testing"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
)

// oasAdmin builds the admin API's options over the OpenAPI stack's
// stores, so that the stack mounts every documented route.
func oasAdmin(t *testing.T, users *memstore.UserRepository, ua *application.UserAdmin, login *application.Login, refresh *memstore.RefreshStore, tokens *josejwt.Tokens) *AdminOptions {
	t.Helper()
	clock := system.Clock{}
	check, err := application.NewAdminCheck(users, clock)
	if err != nil {
		t.Fatal(err)
	}
	au, err := application.NewAdminUsers(ua, check, refresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := application.NewAdminAudit(memstore.NewAuditLog(), clock)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := application.NewKeyAdmin(tokens, clock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	self, err := application.NewSelfService(login, ua, refresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &AdminOptions{Check: check, Users: au, Audit: audit, Keys: keys, Self: self}
}
