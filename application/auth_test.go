package application_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// authEnv wires the auth use cases on in-memory stores, the real token
// adapter in HS256 mode and bcrypt at cost 4.
type authEnv struct {
	clock     *system.ManualClock
	users     *memstore.UserRepository
	refresh   *memstore.RefreshStore
	throttle  *memstore.LoginThrottle
	hasher    *passhash.Hasher
	admin     *application.Users
	ids       ports.IDGenerator
	login     *application.Login
	auth      *application.Authenticate
	refresher *application.Refresh
	logout    *application.Logout
	tokens    application.TokenDeps
	revoked   *background.RevokedSessions
	verifier  ports.TokenVerifier
}

type authOpts struct {
	validator  ports.TokenValidator
	limits     application.ThrottleLimits
	lookup     ports.UserLookup
	sessionMax time.Duration
	refreshTTL time.Duration
	// storesLog, when set, is the audit log the user and refresh stores
	// write the events of their changes to.
	storesLog *memstore.AuditLog
}

func newAuthEnv(t testing.TB, o authOpts) *authEnv {
	t.Helper()
	ctx := context.Background()
	e := &authEnv{clock: newClock(), refresh: memstore.NewRefreshStore(o.storesLog), throttle: memstore.NewLoginThrottle()}
	e.users = memstore.NewUserRepository(o.storesLog, e.refresh)
	var err error
	if e.hasher, err = passhash.New(passhash.Options{BcryptCost: 4}); err != nil {
		t.Fatal(err)
	}
	tok, err := josejwt.New(ctx, josejwt.Options{HS256Secret: []byte(strings.Repeat("s", 32)), Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	ids := &seqIDs{}
	e.ids = ids
	e.audit(t, nil)
	lookup := o.lookup
	if lookup == nil {
		lookup = application.RepoUserLookup{Users: e.users}
	}
	validator, err := application.NewCredentialValidator(ctx, lookup, e.hasher, e.hasher)
	if err != nil {
		t.Fatal(err)
	}
	e.tokens = application.TokenDeps{Issuer: tok.Issuer(), Refresh: e.refresh, Clock: e.clock, IDs: ids,
		SessionMax: o.sessionMax, RefreshTTL: o.refreshTTL}
	e.verifier = tok.Verifier()
	if e.revoked, err = background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: e.refresh, Clock: e.clock}); err != nil {
		t.Fatal(err)
	}
	limits := o.limits
	if limits.Window == 0 {
		limits = application.DefaultThrottleLimits
	}
	if e.login, err = application.NewLogin(application.LoginDeps{Validator: validator, Tokens: e.tokens,
		Throttle: e.throttle, Limits: limits, Users: e.users, Hasher: e.hasher}); err != nil {
		t.Fatal(err)
	}
	if e.auth, err = application.NewAuthenticate(tok.Verifier(), o.validator, lookup, e.revoked, nil); err != nil {
		t.Fatal(err)
	}
	if e.refresher, err = application.NewRefresh(application.RefreshDeps{Verifier: tok.Verifier(),
		Validator: o.validator, Lookup: lookup, Tokens: e.tokens, Revoked: e.revoked}); err != nil {
		t.Fatal(err)
	}
	e.audit(t, nil)
	return e
}

// audit rebuilds the user administration and logout recording in a.
func (e *authEnv) audit(t testing.TB, a *application.AuditTrail) {
	t.Helper()
	check, err := application.NewAdminCheck(e.users, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	if e.admin, err = application.NewUsers(application.UsersDeps{Users: e.users, Hasher: e.hasher, Clock: e.clock,
		IDs: e.ids, Audit: a, Check: check, Refresh: e.refresh, Revoked: e.revoked}); err != nil {
		t.Fatal(err)
	}
	if e.logout, err = application.NewLogout(e.refresh, e.clock, e.revoked, a); err != nil {
		t.Fatal(err)
	}
}

func (e *authEnv) addUser(t *testing.T, name, password string, active bool) domain.User {
	t.Helper()
	u, err := e.admin.Add(context.Background(), domain.System(), application.AddUserInput{Username: name, Password: password, Active: active})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

const pw = "correct horse battery"

func TestLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("right credentials give a pair whose access token authenticates", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		u := e.addUser(t, "Alice", pw, true)
		pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.auth.Execute(ctx, pair.AccessToken)
		if err != nil || p.ID != u.ID || p.FamilyID == "" {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
		if _, err := e.auth.Execute(ctx, pair.RefreshToken); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("a refresh token as bearer: %v", err)
		}
	})

	t.Run("every wrong-credential case is the same unauthenticated error", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		e.addUser(t, "sleepy", pw, false)
		for name, in := range map[string]application.LoginInput{
			"wrong password": {Username: "alice", Password: "nope-nope"},
			"unknown user":   {Username: "mallory", Password: pw},
			"inactive user":  {Username: "sleepy", Password: pw},
			"empty username": {Username: "", Password: pw},
			"empty password": {Username: "alice", Password: ""},
		} {
			if _, err := e.login.Execute(ctx, in); err != domain.ErrUnauthenticated {
				t.Errorf("%s: err = %v, want exactly ErrUnauthenticated", name, err)
			}
		}
	})

	t.Run("failures per username are throttled without hashing, and a success resets them", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{limits: application.ThrottleLimits{PerUsername: 3, PerAddress: 100, Window: time.Minute}})
		e.addUser(t, "alice", pw, true)
		bad := application.LoginInput{Username: "alice", Password: "wrong-wrong", ClientAddr: "10.0.0.1"}
		for range 2 {
			if _, err := e.login.Execute(ctx, bad); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatal(err)
			}
		}
		if _, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw}); err != nil {
			t.Fatalf("success before the limit: %v", err)
		}
		for range 3 {
			_, _ = e.login.Execute(ctx, bad)
		}
		_, err := e.login.Execute(ctx, application.LoginInput{Username: "ALICE", Password: pw})
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindTooMany || de.RetryAfter <= 0 || de.RetryAfter > time.Minute {
			t.Fatalf("err = %v, want too many with a retry-after within the window", err)
		}
		e.clock.Advance(time.Minute + time.Second)
		if _, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw}); err != nil {
			t.Fatalf("after the window: %v", err)
		}
	})

	t.Run("failures per client address are throttled across usernames", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{limits: application.ThrottleLimits{PerUsername: 100, PerAddress: 2, Window: time.Minute}})
		e.addUser(t, "alice", pw, true)
		for _, name := range []string{"x", "y"} {
			_, _ = e.login.Execute(ctx, application.LoginInput{Username: name, Password: "whatever1", ClientAddr: "10.0.0.9"})
		}
		_, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw, ClientAddr: "10.0.0.9"})
		if domain.KindOf(err) != domain.KindTooMany {
			t.Fatalf("err = %v, want too many", err)
		}
		if _, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw, ClientAddr: "10.0.0.10"}); err != nil {
			t.Fatalf("another address: %v", err)
		}
	})

	t.Run("a weaker stored hash is upgraded at login", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		weak, err := passhash.New(passhash.Options{BcryptCost: 4})
		if err != nil {
			t.Fatal(err)
		}
		strong, err := passhash.New(passhash.Options{Algorithm: passhash.Argon2id})
		if err != nil {
			t.Fatal(err)
		}
		hash, _, _ := weak.Hash(ctx, pw)
		u := domain.User{ID: "0190a000-0000-7000-8000-0000000000aa", Username: "old", PasswordHash: hash, Active: true}
		if err := e.users.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		validator, _ := application.NewCredentialValidator(ctx, application.RepoUserLookup{Users: e.users}, strong, strong)
		login, err := application.NewLogin(application.LoginDeps{Validator: validator, Tokens: e.tokens, Users: e.users, Hasher: strong})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := login.Execute(ctx, application.LoginInput{Username: "old", Password: pw}); err != nil {
			t.Fatal(err)
		}
		got, _ := e.users.UserByID(ctx, u.ID)
		if !strings.HasPrefix(got.PasswordHash, "$argon2id$") {
			t.Fatalf("hash not upgraded: %.12s…", got.PasswordHash)
		}
		if _, err := login.Execute(ctx, application.LoginInput{Username: "old", Password: pw}); err != nil {
			t.Fatalf("login with the upgraded hash: %v", err)
		}
	})
	t.Run("a user stored with a control character before they were refused still signs in", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		const name = "tab\tname"
		if _, err := e.admin.Add(ctx, domain.System(), application.AddUserInput{Username: name, Password: pw, Active: true}); domain.KindOf(err) != domain.KindInvalid {
			t.Fatalf("adding %q: %v, want it refused", name, err)
		}
		u := e.addUser(t, "stand-in", pw, true)
		u.ID, u.Username = "0190a000-0000-7000-8000-0000000000ab", name
		if err := e.users.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if _, err := e.login.Execute(ctx, application.LoginInput{Username: name, Password: pw}); err != nil {
			t.Fatalf("login of a stored %q: %v", name, err)
		}
	})
}

type refuseAll struct{}

func (refuseAll) ValidateToken(context.Context, domain.Claims) (bool, error) { return false, nil }

func TestExtraTokenValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plain := newAuthEnv(t, authOpts{})
	plain.addUser(t, "alice", pw, true)
	pair, err := plain.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	strict := newAuthEnv(t, authOpts{validator: refuseAll{}})
	strict.users = plain.users
	auth, _ := application.NewAuthenticate(mustVerifier(t, plain), refuseAll{}, application.RepoUserLookup{Users: plain.users}, nil, nil)
	if _, err := auth.Execute(ctx, pair.AccessToken); !errors.Is(err, domain.ErrAccessTokenFailedValidation) {
		t.Fatalf("access: %v", err)
	}
	ref, _ := application.NewRefresh(application.RefreshDeps{Verifier: mustVerifier(t, plain), Validator: refuseAll{},
		Lookup: application.RepoUserLookup{Users: plain.users}, Tokens: plain.tokens})
	if _, err := ref.Execute(ctx, pair.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrRefreshTokenFailedValidation) {
		t.Fatalf("refresh: %v", err)
	}
	if domain.KindOf(domain.ErrAccessTokenFailedValidation) != domain.KindInvalid {
		t.Fatal("failed extra validation must be a bad request")
	}
}

func mustVerifier(t *testing.T, e *authEnv) ports.TokenVerifier {
	t.Helper()
	tok, err := josejwt.New(context.Background(), josejwt.Options{HS256Secret: []byte(strings.Repeat("s", 32)), Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Verifier()
}

func TestRefreshRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a refresh consumes the token and its successor works", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		first, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		e.clock.Advance(time.Second)
		second, err := e.refresher.Execute(ctx, first.RefreshToken, domain.Client{})
		if err != nil {
			t.Fatal(err)
		}
		third, err := e.refresher.Execute(ctx, second.RefreshToken, domain.Client{})
		if err != nil || third.RefreshToken == second.RefreshToken {
			t.Fatalf("successor: %v", err)
		}
	})

	t.Run("reusing a consumed token revokes the whole family", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		first, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		second, err := e.refresher.Execute(ctx, first.RefreshToken, domain.Client{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.refresher.Execute(ctx, first.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("reuse: %v", err)
		}
		if _, err := e.refresher.Execute(ctx, second.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("the thief's successor must be revoked too: %v", err)
		}
		other, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		if _, err := e.refresher.Execute(ctx, other.RefreshToken, domain.Client{}); err != nil {
			t.Fatalf("another login's family is untouched: %v", err)
		}
	})

	t.Run("of concurrent refreshes with one token at most one succeeds", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		pair, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for range 20 {
			wg.Go(func() {
				_, err := e.refresher.Execute(ctx, pair.RefreshToken, domain.Client{})
				if err == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				} else if !errors.Is(err, domain.ErrUnauthenticated) {
					t.Errorf("unexpected error %v", err)
				}
			})
		}
		wg.Wait()
		if ok > 1 {
			t.Fatalf("%d refreshes succeeded with one token", ok)
		}
	})

	t.Run("within the grace window a retry gets the same refresh token again; after it, reuse revokes", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		graceful := e.graceful(t, 10*time.Second)
		first, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		rotated, err := graceful.Execute(ctx, first.RefreshToken, domain.Client{})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(5 * time.Second)
		retried, err := graceful.Execute(ctx, first.RefreshToken, domain.Client{})
		if err != nil {
			t.Fatalf("a retry within the grace window: %v", err)
		}
		if jti(t, e, retried.RefreshToken) != jti(t, e, rotated.RefreshToken) {
			t.Fatal("the retry got a second live refresh token: two branches in one family")
		}
		if _, err := e.auth.Execute(ctx, retried.AccessToken); err != nil {
			t.Fatalf("the retry's access token: %v", err)
		}
		e.clock.Advance(6 * time.Second)
		if _, err := graceful.Execute(ctx, first.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("a reuse after the window: %v", err)
		}
		if _, err := graceful.Execute(ctx, retried.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("the late reuse must revoke the family: %v", err)
		}
	})

	t.Run("twenty concurrent refreshes with one token within grace all succeed with one live refresh token", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		graceful := e.graceful(t, 10*time.Second)
		pair, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		const n = 20
		got := make([]domain.TokenPair, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { got[i], errs[i] = graceful.Execute(ctx, pair.RefreshToken, domain.Client{}) })
		}
		wg.Wait()
		ids := map[string]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("refresh %d: %v", i, errs[i])
			}
			ids[jti(t, e, got[i].RefreshToken)] = true
		}
		if len(ids) != 1 {
			t.Fatalf("%d distinct refresh tokens were handed out, want 1", len(ids))
		}
		e.clock.Advance(11 * time.Second)
		if _, err := graceful.Execute(ctx, got[n-1].RefreshToken, domain.Client{}); err != nil {
			t.Fatalf("the one live refresh token after the window: %v", err)
		}
		if _, err := graceful.Execute(ctx, pair.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("the first token after the window must be reuse: %v", err)
		}
		if _, err := graceful.Execute(ctx, got[0].RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("the reuse must revoke the family: %v", err)
		}
	})

	t.Run("without grace a retry is reuse at once", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		strict := e.graceful(t, 0)
		first, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		second, err := strict.Execute(ctx, first.RefreshToken, domain.Client{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := strict.Execute(ctx, first.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("an immediate retry without grace: %v", err)
		}
		if _, err := strict.Execute(ctx, second.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("the reuse must revoke the family: %v", err)
		}
	})

	t.Run("an expired refresh token is refused", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		pair, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		e.clock.Advance(application.DefaultRefreshTTL + 6*time.Second)
		if _, err := e.refresher.Execute(ctx, pair.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("disabling a user ends refresh and authentication", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		pair, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		if _, err := patchByName(ctx, e.admin, "alice", application.UserPatch{Active: new(false)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.refresher.Execute(ctx, pair.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("refresh: %v", err)
		}
		if _, err := e.auth.Execute(ctx, pair.AccessToken); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("authenticate: %v", err)
		}
		if _, err := patchByName(ctx, e.admin, "alice", application.UserPatch{Active: new(true)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.refresher.Execute(ctx, pair.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("a family revoked at disable stays revoked: %v", err)
		}
	})

	t.Run("logout revokes the caller's family only", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		a, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		b, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		p, err := e.auth.Execute(ctx, a.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.logout.Execute(ctx, domain.AsPrincipal(p)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.refresher.Execute(ctx, a.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("logged-out family: %v", err)
		}
		if _, err := e.refresher.Execute(ctx, b.RefreshToken, domain.Client{}); err != nil {
			t.Fatalf("other session: %v", err)
		}
	})
}

func TestUsersOnTheCommandLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAuthEnv(t, authOpts{})
	e.addUser(t, "Alice", pw, true)
	if _, err := e.admin.Add(ctx, domain.System(), application.AddUserInput{Username: "alice ", Password: pw}); !errors.Is(err, domain.ErrUserExists) {
		t.Fatalf("case-insensitive duplicate: %v", err)
	}
	if _, err := e.admin.Add(ctx, domain.System(), application.AddUserInput{Username: "bob", Password: "short"}); domain.KindOf(err) != domain.KindInvalid {
		t.Fatalf("short password: %v", err)
	}
	if _, err := resetByName(ctx, e.admin, "alice", "another password"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw}); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("old password still works: %v", err)
	}
	if _, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: "another password"}); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if _, err := patchByName(ctx, e.admin, "nobody", application.UserPatch{Active: new(false)}); !errors.Is(err, domain.ErrUserNotFound) {
		t.Fatalf("unknown user: %v", err)
	}
}

// graceful returns a Refresh of e's stores with the given reuse grace.
func (e *authEnv) graceful(t *testing.T, grace time.Duration) *application.Refresh {
	t.Helper()
	r, err := application.NewRefresh(application.RefreshDeps{Verifier: mustVerifier(t, e),
		Lookup: application.RepoUserLookup{Users: e.users}, Tokens: e.tokens, ReuseGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// jti returns the id of a refresh token e issued.
func jti(t *testing.T, e *authEnv, token string) string {
	t.Helper()
	c, err := mustVerifier(t, e).RefreshToken(context.Background(), token)
	if err != nil {
		t.Fatalf("verify refresh token: %v", err)
	}
	return c.ID
}
