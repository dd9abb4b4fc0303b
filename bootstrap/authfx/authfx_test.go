package authfx_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/authfx"
	"github.com/cachegate/cachegate/bootstrap/storefx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

const password = "a long enough password"

// harness starts the auth module on in-memory storage and hands out the
// use cases.
type harness struct {
	login   *application.Login
	auth    *application.Authenticate
	refresh *application.Refresh
	admin   *application.Users
}

func start(t *testing.T, opts ...fx.Option) harness {
	t.Helper()
	var h harness
	app := fxtest.New(t,
		fx.NopLogger,
		fx.Supply(slog.New(slog.NewTextHandler(io.Discard, nil))),
		bootstrap.System(),
		storefx.Memory(),
		fx.Options(opts...),
		fx.Populate(&h.login, &h.auth, &h.refresh, &h.admin),
	)
	app.RequireStart()
	t.Cleanup(app.RequireStop)
	return h
}

func (h harness) addAlice(t *testing.T) domain.User {
	t.Helper()
	u, err := h.admin.Add(context.Background(), domain.System(), application.AddUserInput{Username: "alice", Password: password, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func fast(o authfx.Options) authfx.Options {
	o.BcryptCost = 4
	return o
}

func TestDefaultsLogInAndAuthenticate(t *testing.T) {
	t.Parallel()
	h := start(t, authfx.ForRoot(fast(authfx.Options{})))
	u := h.addAlice(t)
	pair, err := h.login.Execute(context.Background(), application.LoginInput{Username: "alice", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.auth.Execute(context.Background(), pair.AccessToken)
	if err != nil || p.ID != u.ID {
		t.Fatalf("authenticate: %+v %v", p, err)
	}
}

// countingLookup is a fake user lookup that delegates to another and
// counts its calls.
type countingLookup struct {
	inner ports.UserLookup
	calls atomic.Int32
}

func (c *countingLookup) ByUsername(ctx context.Context, n string) (domain.User, error) {
	c.calls.Add(1)
	return c.inner.ByUsername(ctx, n)
}

func (c *countingLookup) BySubject(ctx context.Context, s string) (domain.Principal, error) {
	c.calls.Add(1)
	p, err := c.inner.BySubject(ctx, s)
	p.Value = "from the fake lookup"
	return p, err
}

func TestUserLookupIsReplaceable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	check := func(t *testing.T, h harness, fake *countingLookup) {
		t.Helper()
		h.addAlice(t)
		pair, err := h.login.Execute(ctx, application.LoginInput{Username: "alice", Password: password})
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.auth.Execute(ctx, pair.AccessToken)
		if err != nil || p.Value != "from the fake lookup" {
			t.Fatalf("the guard did not use the fake: %+v %v", p, err)
		}
		if fake.calls.Load() < 2 {
			t.Fatalf("fake called %d times", fake.calls.Load())
		}
	}
	t.Run("through the options field", func(t *testing.T) {
		t.Parallel()
		fake := &countingLookup{}
		h := start(t,
			authfx.ForRootAsync(func(users ports.UserRepository) (authfx.Options, error) {
				fake.inner = application.RepoUserLookup{Users: users}
				return fast(authfx.Options{UserLookup: fake}), nil
			}))
		check(t, h, fake)
	})
	t.Run("through fx.Decorate", func(t *testing.T) {
		t.Parallel()
		fake := &countingLookup{}
		h := start(t, authfx.ForRoot(fast(authfx.Options{})),
			fx.Decorate(func(l ports.UserLookup) ports.UserLookup { fake.inner = l; return fake }))
		check(t, h, fake)
	})
}

// openSesame accepts one password whatever the stored hash.
type openSesame struct{}

func (openSesame) Validate(_ context.Context, in ports.PasswordCheck) (bool, error) {
	return in.Password == "open sesame", nil
}

func (openSesame) ValidateObject(_ context.Context, pw string, _ domain.User) (bool, error) {
	return pw == "open sesame", nil
}

func TestPasswordValidatorIsReplaceable(t *testing.T) {
	t.Parallel()
	h := start(t, authfx.ForRoot(fast(authfx.Options{PasswordValidator: openSesame{}})))
	h.addAlice(t)
	ctx := context.Background()
	if _, err := h.login.Execute(ctx, application.LoginInput{Username: "alice", Password: "open sesame"}); err != nil {
		t.Fatalf("the fake's password: %v", err)
	}
	if _, err := h.login.Execute(ctx, application.LoginInput{Username: "alice", Password: password}); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("the stored password must no longer work: %v", err)
	}
}

// oneUser validates one fixed user whatever the store holds.
type oneUser struct{ u domain.User }

func (o oneUser) ValidateUser(_ context.Context, in ports.LoginInput) (domain.User, error) {
	if in.Username == "robot" && in.Password == "beep boop" {
		return o.u, nil
	}
	return domain.User{}, domain.ErrUnauthenticated
}

func (oneUser) IsActive(context.Context, domain.User) (bool, error) { return true, nil }

func TestUserValidatorIsReplaceable(t *testing.T) {
	t.Parallel()
	robot := domain.User{ID: "0190a000-0000-7000-8000-0000000000ff", Username: "robot", Active: true}
	h := start(t, authfx.ForRoot(fast(authfx.Options{UserValidator: oneUser{robot}})))
	pair, err := h.login.Execute(context.Background(), application.LoginInput{Username: "robot", Password: "beep boop"})
	if err != nil || pair.AccessToken == "" {
		t.Fatalf("login through the fake validator: %v", err)
	}
}

// stampIssuer signs nothing: its tokens are recognisable strings.
type stampIssuer struct{}

func (stampIssuer) AccessToken(_ context.Context, c domain.Claims) (string, error) {
	return "stamp-access-" + c.Subject, nil
}

func (stampIssuer) RefreshToken(_ context.Context, c domain.Claims) (string, error) {
	return "stamp-refresh-" + c.Subject, nil
}

// stampVerifier accepts stampIssuer's tokens.
type stampVerifier struct{}

func (stampVerifier) AccessToken(_ context.Context, tok string) (domain.Claims, error) {
	sub, ok := strings.CutPrefix(tok, "stamp-access-")
	if !ok {
		return domain.Claims{}, domain.ErrUnauthenticated
	}
	return domain.Claims{Kind: domain.AccessToken, Subject: sub, ID: "j", ExpiresAt: time.Now().Add(time.Hour)}, nil
}

func (stampVerifier) RefreshToken(_ context.Context, tok string) (domain.Claims, error) {
	return domain.Claims{}, domain.ErrUnauthenticated
}

func TestTokenIssuerAndVerifierAreReplaceable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("issuer", func(t *testing.T) {
		t.Parallel()
		h := start(t, authfx.ForRoot(fast(authfx.Options{TokenIssuer: stampIssuer{}})))
		u := h.addAlice(t)
		pair, err := h.login.Execute(ctx, application.LoginInput{Username: "alice", Password: password})
		if err != nil || pair.AccessToken != "stamp-access-"+u.ID {
			t.Fatalf("login did not use the fake issuer: %v", err)
		}
	})
	t.Run("verifier", func(t *testing.T) {
		t.Parallel()
		h := start(t, authfx.ForRoot(fast(authfx.Options{TokenVerifier: stampVerifier{}})))
		u := h.addAlice(t)
		p, err := h.auth.Execute(ctx, "stamp-access-"+u.ID)
		if err != nil || p.ID != u.ID {
			t.Fatalf("the guard did not use the fake verifier: %+v %v", p, err)
		}
	})
}

type refuse struct{}

func (refuse) ValidateToken(context.Context, domain.Claims) (bool, error) { return false, nil }

func TestTokenValidatorIsReplaceable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := start(t, authfx.ForRoot(fast(authfx.Options{TokenValidator: refuse{}})))
	h.addAlice(t)
	pair, err := h.login.Execute(ctx, application.LoginInput{Username: "alice", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.auth.Execute(ctx, pair.AccessToken); !errors.Is(err, domain.ErrAccessTokenFailedValidation) {
		t.Fatalf("access: %v", err)
	}
	if _, err := h.refresh.Execute(ctx, pair.RefreshToken); !errors.Is(err, domain.ErrRefreshTokenFailedValidation) {
		t.Fatalf("refresh: %v", err)
	}
}

func TestBadOptionsFailStart(t *testing.T) {
	t.Parallel()
	app := fx.New(fx.NopLogger, fx.Supply(slog.New(slog.DiscardHandler)), bootstrap.System(), storefx.Memory(),
		authfx.ForRoot(authfx.Options{BcryptCost: 99}), fx.Invoke(func(*application.Login) {}))
	if app.Err() == nil {
		t.Fatal("bcrypt cost 99 must fail start-up")
	}
}

func TestLogoutEndsTheAccessTokenAndSessionMaxIsPassedOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var logout *application.Logout
	var revoked *background.RevokedSessions
	h := start(t, authfx.ForRoot(fast(authfx.Options{SessionMax: time.Hour, RefreshTTL: 2 * time.Hour})),
		fx.Populate(&logout, &revoked))
	if revoked == nil {
		t.Fatal("the module provides no revoked sessions over the in-memory refresh store")
	}
	h.addAlice(t)
	pair, err := h.login.Execute(ctx, application.LoginInput{Username: "alice", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	if exp := jwtExp(t, pair.RefreshToken); time.Until(exp) > time.Hour {
		t.Errorf("refresh token expires in %v, past the session maximum of an hour", time.Until(exp))
	}
	p, err := h.auth.Execute(ctx, pair.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := logout.Execute(ctx, domain.AsPrincipal(p)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.auth.Execute(ctx, pair.AccessToken); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("the access token after logout: %v, want unauthenticated", err)
	}
}

// jwtExp reads a token's exp, unverified.
func jwtExp(t *testing.T, tok string) time.Time {
	t.Helper()
	parts := strings.Split(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Exp int64 `json:"exp"`
	}
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatal("unreadable token payload")
	}
	return time.Unix(c.Exp, 0)
}
