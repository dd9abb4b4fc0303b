package application_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// countingPasswords is the real hasher, counting the password checks.
type countingPasswords struct {
	*passhash.Hasher
	checks atomic.Int32
}

func (c *countingPasswords) Validate(ctx context.Context, in ports.PasswordCheck) (bool, error) {
	c.checks.Add(1)
	return c.Hasher.Validate(ctx, in)
}

func (c *countingPasswords) ValidateObject(ctx context.Context, pw string, u domain.User) (bool, error) {
	c.checks.Add(1)
	return c.Hasher.ValidateObject(ctx, pw, u)
}

func TestLoginCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAuthEnv(t, authOpts{})
	e.addUser(t, "alice", pw, true)
	h, err := passhash.New(passhash.Options{BcryptCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	passwords := &countingPasswords{Hasher: h}
	lookup := application.RepoUserLookup{Users: e.users}
	validator, err := application.NewCredentialValidator(ctx, lookup, passwords, h)
	if err != nil {
		t.Fatal(err)
	}
	login, err := application.NewLogin(application.LoginDeps{Validator: validator, Tokens: e.tokens,
		Throttle: memstore.NewLoginThrottle(), Limits: application.ThrottleLimits{PerUsername: 2, PerAddress: 100, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("an unknown user costs a password check, like a wrong password", func(t *testing.T) {
		before := passwords.checks.Load()
		_, _ = login.Execute(ctx, application.LoginInput{Username: "nobody", Password: pw})
		_, _ = login.Execute(ctx, application.LoginInput{Username: "alice", Password: "wrong-password"})
		if got := passwords.checks.Load() - before; got != 2 {
			t.Fatalf("%d password checks for one unknown user and one wrong password, want 2", got)
		}
	})

	t.Run("a throttled attempt costs no password check", func(t *testing.T) {
		_, _ = login.Execute(ctx, application.LoginInput{Username: "alice", Password: "wrong-password"})
		before := passwords.checks.Load()
		_, err := login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		if domain.KindOf(err) != domain.KindTooMany {
			t.Fatalf("err = %v, want throttled", err)
		}
		if got := passwords.checks.Load() - before; got != 0 {
			t.Fatalf("a throttled attempt ran %d password checks", got)
		}
	})
}
