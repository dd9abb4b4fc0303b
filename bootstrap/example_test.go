package bootstrap_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// directory is an embedder's own user store: here a fixed map, in real
// life an LDAP or an existing users table. It replaces cachegate's user
// lookup; every other adapter keeps its default.
type directory struct {
	users map[string]domain.User
}

func (d directory) ByUsername(_ context.Context, name string) (domain.User, error) {
	if u, ok := d.users[strings.ToLower(name)]; ok {
		return u, nil
	}
	return domain.User{}, domain.ErrUserNotFound
}

func (d directory) BySubject(_ context.Context, sub string) (domain.Principal, error) {
	for _, u := range d.users {
		if u.ID == sub {
			return domain.Principal{ID: u.ID, Username: u.Username, Value: "from the directory"}, nil
		}
	}
	return domain.Principal{}, domain.ErrUserNotFound
}

// Example_embed runs cachegate inside another program: in-memory SQLite,
// a swapped user lookup (fx.Decorate on the port), the HTTP API on a free
// port, and the Go cache API used directly.
func Example_embed() {
	hasher, _ := passhash.New(passhash.Options{BcryptCost: 4})
	hash, _, _ := hasher.Hash(context.Background(), "correct horse battery")
	dir := directory{users: map[string]domain.User{
		"ada": {ID: "0190a000-0000-7000-8000-00000000ada0", Username: "ada", PasswordHash: hash, Active: true},
	}}

	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.Database = "sqlite::memory:"
	cfg.Auth.BcryptCost = 4

	var (
		addr  httpfx.Addr
		cache *application.Cache
	)
	app, err := bootstrap.Start(bootstrap.App(cfg, io.Discard,
		fx.Decorate(func(ports.UserLookup) ports.UserLookup { return dir }),
		fx.Populate(&addr, &cache)))
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	defer func() { _ = bootstrap.Stop(app, 10*time.Second) }()

	// The Go API: no HTTP, no token; the trusted system actor.
	e, err := cache.Create(context.Background(), "user", application.CacheInput{
		Key: "theme", Type: "settings", AssigneeID: "0190a000-0000-7000-8000-00000000ada0", Data: []byte(`"dark"`)})
	fmt.Println("created version", e.Version, err)

	// The HTTP API, with a user only the directory knows.
	res, err := http.Post("http://"+addr.Get()+"/auth/login", "application/json",
		strings.NewReader(`{"username":"ada","password":"correct horse battery"}`))
	if err != nil {
		fmt.Println("login:", err)
		return
	}
	res.Body.Close()
	fmt.Println("login status", res.StatusCode)

	// Output:
	// created version 1 <nil>
	// login status 201
}
