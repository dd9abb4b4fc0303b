package apifuzz_test

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// The fuzzer's users: one who is not an admin (the cache and self-service
// operations) and one admin (the /admin operations, docs/admin.md), made
// with the set-up link.
// Their passwords are never printed (reports redact them).
const (
	fuzzUsername  = "fuzz"
	fuzzPassword  = "correct horse battery staple"
	adminUsername = "fuzzadmin"
	adminPassword = "admin horse battery staple"
)

// target is the server under test.
type target struct {
	addr   string
	userID string
	// setupToken is the token of the one-time set-up link the server
	// issued at start, as serve does and logs (docs/admin.md, "The first
	// admin"): the fuzzer's admin is made with it (fuzzer.firstAdmin).
	setupToken string
	// dbPath is the SQLite file; "" on PostgreSQL.
	dbPath string
}

// onPostgres is a startTarget tweak: the server runs on a fresh
// PostgreSQL database (test/pgtest; the test skips loudly without
// CACHEGATE_TEST_POSTGRES, and fails under CI) instead of a SQLite file.
func onPostgres(t *testing.T) func(*config.Config) {
	url := pgtest.New(t)
	return func(c *config.Config) { c.Database = url }
}

// startTarget runs the whole service as a user runs it: bootstrap with the
// default configuration on a SQLite file (or, with onPostgres, on
// PostgreSQL), listening on a free loopback
// port. Two settings differ, both to let a long run go on: bcrypt at its
// lowest cost, and no failed-login throttle (thousands of generated logins
// fail; with the default limits every later login, the stateful pass's
// included, would be 429 for 15 minutes). 429 stays an allowed answer.
func startTarget(t *testing.T, tweak ...func(*config.Config)) *target {
	t.Helper()
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	path := filepath.Join(t.TempDir(), "fuzz.db")
	cfg.Database = "sqlite:" + path
	cfg.Auth.BcryptCost = 4
	cfg.Auth.Throttle.UsernameLimit, cfg.Auth.Throttle.AddressLimit = 0, 0
	for _, f := range tweak {
		f(&cfg)
	}
	if cfg.Database != "sqlite:"+path {
		path = ""
	}
	var (
		addr  httpfx.Addr
		admin *application.Users
		link  *application.FirstAdmin
	)
	app, err := bootstrap.Start(bootstrap.App(cfg, io.Discard, fx.Populate(&addr, &admin, &link)))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })
	u, err := admin.Add(t.Context(), domain.System(), application.AddUserInput{Username: fuzzUsername, Password: fuzzPassword, Active: true})
	if err != nil {
		t.Fatalf("add the fuzzer's user: %v", err)
	}
	// No admin exists yet: the link is issued as serve issues it, and the
	// test keeps the token serve would log.
	l, err := link.Issue(t.Context())
	if err != nil {
		t.Fatalf("issue the set-up link: %v", err)
	}
	return &target{addr: addr.Get(), userID: u.ID, setupToken: l.Token, dbPath: path}
}
