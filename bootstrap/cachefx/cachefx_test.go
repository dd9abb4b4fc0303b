package cachefx_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/cachefx"
	"github.com/cachegate/cachegate/bootstrap/storefx"
	"github.com/cachegate/cachegate/domain"
)

const alice = "0b9f0e4c-6a51-4d6a-9d54-1f6b7a1c2d3e"

func opts(name, entity string) cachefx.Options {
	return cachefx.Options{Assignments: []cachefx.Assignment{
		{Name: name, EntityKey: entity, Table: entity + "_t", Policy: domain.PolicyOwner},
	}}
}

func entry(key string) application.CacheInput {
	return application.CacheInput{Key: key, Type: "t", AssigneeID: alice, Data: []byte(`1`)}
}

func TestForRootProvidesTheGoAPI(t *testing.T) {
	t.Parallel()
	var c *application.Cache
	app := fxtest.New(t, fx.NopLogger, bootstrap.System(), storefx.Memory(),
		cachefx.ForRoot(opts("user", "userCache")), fx.Populate(&c))
	app.RequireStart()
	defer app.RequireStop()
	ctx := context.Background()
	if _, err := c.Create(ctx, "user", entry("k")); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "userCache", application.CacheRef{Key: "k", Type: "t", AssigneeID: alice})
	if err != nil || got.Version != 1 {
		t.Fatalf("get by entity key: %+v %v", got, err)
	}
}

// settings stands for an embedder's own configuration type.
type settings struct{ assignment string }

func TestForRootAsyncBuildsOptionsFromAnInjectedDependency(t *testing.T) {
	t.Parallel()
	var c *application.Cache
	app := fxtest.New(t, fx.NopLogger, bootstrap.System(), storefx.Memory(),
		fx.Supply(settings{assignment: "prefs"}),
		cachefx.ForRootAsync(func(s settings) (cachefx.Options, error) { return opts(s.assignment, "prefCache"), nil }),
		fx.Populate(&c))
	app.RequireStart()
	defer app.RequireStop()
	if _, err := c.Create(context.Background(), "prefs", entry("k")); err != nil {
		t.Fatal(err)
	}
}

func TestRegisterTwiceGivesIndependentFeatures(t *testing.T) {
	t.Parallel()
	var in struct {
		fx.In
		Orders *application.Cache `name:"cache.orders"`
		Carts  *application.Cache `name:"cache.carts"`
	}
	app := fxtest.New(t, fx.NopLogger, bootstrap.System(), storefx.Memory(),
		cachefx.Register("orders", opts("orders", "orderCache")),
		cachefx.RegisterAsync("carts", func(s settings) (cachefx.Options, error) { return opts("carts", "cartCache"), nil }),
		fx.Supply(settings{}),
		fx.Populate(&in))
	app.RequireStart()
	defer app.RequireStop()
	ctx := context.Background()
	if _, err := in.Orders.Create(ctx, "orders", entry("k")); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Carts.Create(ctx, "orders", entry("k")); !errors.Is(err, domain.ErrUnknownAssignment) {
		t.Fatalf("the carts feature must not know the orders assignment: %v", err)
	}
	if _, err := in.Carts.Create(ctx, "carts", entry("k")); err != nil {
		t.Fatalf("same natural key in another feature's store: %v", err)
	}
}

func TestBadOptionsFailStart(t *testing.T) {
	t.Parallel()
	app := fx.New(fx.NopLogger, bootstrap.System(), storefx.Memory(),
		cachefx.ForRoot(cachefx.Options{}), fx.Invoke(func(*application.Cache) {}))
	if app.Err() == nil {
		t.Fatal("no assignments must fail start-up")
	}
}
