package bootstrap_test

import (
	"io"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/contract"
	"github.com/cachegate/cachegate/test/pgtest"
)

// The admin API's HTTP contract (docs/admin.md) in process, on the real
// fx graph over SQLite and PostgreSQL, through a real socket.
func TestAdminHTTPContractInProcess(t *testing.T) {
	t.Parallel()
	for name, database := range map[string]func(t *testing.T) string{
		"SQLite":     func(t *testing.T) string { return "sqlite:" + t.TempDir() + "/admin.db" },
		"PostgreSQL": func(t *testing.T) string { return pgtest.New(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			harness := func(t *testing.T) contract.AdminHTTPTarget {
				cfg := config.Default()
				cfg.Addr = "127.0.0.1:0"
				cfg.Database = database(t)
				cfg.Auth.BcryptCost = 4
				var (
					addr  httpfx.Addr
					users *application.Users
				)
				app, err := bootstrap.Start(bootstrap.App(cfg, io.Discard, fx.Populate(&addr, &users)))
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				t.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })
				return contract.AdminHTTPTarget{
					BaseURL: "http://" + addr.Get(),
					AddUser: func(t *testing.T, username, password string, admin bool) string {
						t.Helper()
						u, err := users.Add(t.Context(), domain.System(), application.AddUserInput{Username: username, Password: password, Active: true, Admin: admin})
						if err != nil {
							t.Fatalf("add user: %v", err)
						}
						return u.ID
					},
				}
			}
			t.Run("contract", func(t *testing.T) { t.Parallel(); contract.AdminHTTP(t, harness) })
			t.Run("last admin", func(t *testing.T) { t.Parallel(); contract.AdminHTTPLastAdmin(t, harness) })
		})
	}
}
