package application_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
)

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestAuthChanges(t *testing.T) {
	t.Parallel()
	t.Run("a bump closes the channel taken before it, and only that one", func(t *testing.T) {
		t.Parallel()
		c := application.NewAuthChanges()
		before := c.Changed()
		if closed(before) {
			t.Fatal("closed before any change")
		}
		c.Bump()
		if !closed(before) {
			t.Fatal("the channel taken before the bump is still open")
		}
		after := c.Changed()
		if closed(after) {
			t.Fatal("the channel taken after the bump is already closed")
		}
	})
	t.Run("bumps in a burst are signalled once more, after the gap", func(t *testing.T) {
		t.Parallel()
		c := application.NewAuthChanges()
		c.Bump()
		burst := c.Changed()
		for range 100 {
			c.Bump()
		}
		select {
		case <-burst:
		case <-time.After(30 * application.AuthChangesGap):
			t.Fatal("the bumps of a burst were never signalled")
		}
		if after := c.Changed(); closed(after) {
			t.Fatal("the burst was signalled more than once")
		}
	})
	t.Run("a nil broadcaster never changes and bumps harmlessly", func(t *testing.T) {
		t.Parallel()
		var c *application.AuthChanges
		c.Bump()
		if c.Changed() != nil {
			t.Fatal("a nil broadcaster returned a channel")
		}
	})
}

// streamReplica is another process's guard over e's stores, as an event
// stream sees it: its revoked sessions bump changes when a poll finds a
// new family.
func (e *authEnv) streamReplica(t *testing.T) (*application.Authenticate, *background.RevokedSessions) {
	t.Helper()
	changes := application.NewAuthChanges()
	revoked, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: e.refresh, Clock: e.clock,
		Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := application.NewAuthenticate(e.verifier, nil, application.RepoUserLookup{Users: e.users}, revoked, changes)
	if err != nil {
		t.Fatal(err)
	}
	return auth, revoked
}

func TestRecheckEndsWhatARequestWouldRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, e *authEnv, mine domain.TokenPair, p domain.Principal)
	}{
		{"logout", func(t *testing.T, e *authEnv, _ domain.TokenPair, p domain.Principal) {
			if err := e.logout.Execute(ctx, domain.AsPrincipal(p)); err != nil {
				t.Fatal(err)
			}
		}},
		{"refresh-token reuse", func(t *testing.T, e *authEnv, mine domain.TokenPair, _ domain.Principal) {
			if _, err := e.refresher.Execute(ctx, mine.RefreshToken, domain.Client{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.refresher.Execute(ctx, mine.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("reuse: %v", err)
			}
		}},
		{"set-password", func(t *testing.T, e *authEnv, _ domain.TokenPair, _ domain.Principal) {
			if _, err := resetByName(ctx, e.admin, "alice", "another password"); err != nil {
				t.Fatal(err)
			}
		}},
		{"users disable", func(t *testing.T, e *authEnv, _ domain.TokenPair, _ domain.Principal) {
			if _, err := patchByName(ctx, e.admin, "alice", application.UserPatch{Active: new(false)}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name+" wakes the other replica's streams and its recheck refuses", func(t *testing.T) {
			t.Parallel()
			e := newAuthEnv(t, authOpts{})
			e.addUser(t, "alice", pw, true)
			e.addUser(t, "bob", pw, true)
			mine, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
			bobs, _ := e.login.Execute(ctx, application.LoginInput{Username: "bob", Password: pw})
			replica, revoked := e.streamReplica(t)
			if err := revoked.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			p, err := replica.Execute(ctx, mine.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			other, err := replica.Execute(ctx, bobs.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			changed := replica.Changed()
			if err := replica.Recheck(ctx, p, e.clock.Now()); err != nil {
				t.Fatalf("before: %v", err)
			}
			tc.end(t, e, mine, p)
			if closed(changed) {
				t.Fatal("the replica signalled a change before it could know of one")
			}
			// What the replica's poll loop does next.
			e.clock.Advance(background.DefaultRevocationPoll)
			if err := revoked.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			if !closed(changed) {
				t.Fatal("the poll that found the revoked session signalled no change")
			}
			if err := replica.Recheck(ctx, p, e.clock.Now()); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("recheck of the ended session = %v, want unauthenticated", err)
			}
			if err := replica.Recheck(ctx, other, e.clock.Now()); err != nil {
				t.Fatalf("recheck of another user's session: %v", err)
			}
			// A poll that finds nothing new signals nothing.
			next := replica.Changed()
			e.clock.Advance(background.DefaultRevocationPoll)
			if err := revoked.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			if closed(next) {
				t.Fatal("a poll re-reading the same revocations signalled a change")
			}
		})
	}
}

func TestRecheckHere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a logout in this process signals at once", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		changes := application.NewAuthChanges()
		revoked, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: e.refresh, Clock: e.clock,
			Changes: changes})
		if err != nil {
			t.Fatal(err)
		}
		auth, err := application.NewAuthenticate(e.verifier, nil, application.RepoUserLookup{Users: e.users}, revoked, changes)
		if err != nil {
			t.Fatal(err)
		}
		logout, err := application.NewLogout(e.refresh, e.clock, revoked, nil)
		if err != nil {
			t.Fatal(err)
		}
		pair, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		p, err := auth.Execute(ctx, pair.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		changed := auth.Changed()
		if err := logout.Execute(ctx, domain.AsPrincipal(p)); err != nil {
			t.Fatal(err)
		}
		if !closed(changed) {
			t.Fatal("the logout signalled no change")
		}
		if err := auth.Recheck(ctx, p, e.clock.Now()); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("recheck after logout = %v, want unauthenticated", err)
		}
	})
	t.Run("the token's expiry ends it, without the leeway", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		pair, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		p, err := e.auth.Execute(ctx, pair.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.auth.Recheck(ctx, p, p.ExpiresAt.Add(-time.Second)); err != nil {
			t.Fatalf("a second before expiry: %v", err)
		}
		if err := e.auth.Recheck(ctx, p, p.ExpiresAt); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("at expiry: %v, want unauthenticated", err)
		}
	})
	t.Run("revoking the token's signing key signals and ends it, not another key's", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		changes := application.NewAuthChanges()
		keys := memstore.NewKeyStore(nil)
		tok, err := josejwt.New(ctx, josejwt.Options{Keys: keys, Clock: e.clock, KeysRevoked: changes.Bump})
		if err != nil {
			t.Fatal(err)
		}
		mint := e.tokens
		mint.Issuer = tok.Issuer()
		login, err := application.NewLogin(application.LoginDeps{Validator: mustCredentials(t, e), Tokens: mint,
			Users: e.users, Hasher: e.hasher})
		if err != nil {
			t.Fatal(err)
		}
		auth, err := application.NewAuthenticate(tok.Verifier(), nil, application.RepoUserLookup{Users: e.users}, e.revoked, changes)
		if err != nil {
			t.Fatal(err)
		}
		old, err := login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		if err != nil {
			t.Fatal(err)
		}
		p, err := auth.Execute(ctx, old.AccessToken)
		if err != nil || p.KeyID == "" {
			t.Fatalf("Execute = %+v, %v; want a principal naming its key", p, err)
		}
		if _, err := tok.Rotate(ctx, true); err != nil {
			t.Fatal(err)
		}
		fresh, _ := login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
		q, err := auth.Execute(ctx, fresh.AccessToken)
		if err != nil || q.KeyID == p.KeyID {
			t.Fatalf("after rotation: %+v, %v; want a token of the new key", q, err)
		}
		changed := auth.Changed()
		if err := tok.Revoke(ctx, p.KeyID); err != nil {
			t.Fatal(err)
		}
		if !closed(changed) {
			t.Fatal("revoking the key signalled no change")
		}
		if err := auth.Recheck(ctx, p, e.clock.Now()); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("recheck of a revoked key's token = %v, want unauthenticated", err)
		}
		if err := auth.Recheck(ctx, q, e.clock.Now()); err != nil {
			t.Fatalf("recheck of the new key's token: %v", err)
		}
		if _, err := auth.Execute(ctx, old.AccessToken); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("a request with the revoked key's token: %v; Recheck must agree with it", err)
		}
	})
}

func mustCredentials(t *testing.T, e *authEnv) *application.CredentialValidator {
	t.Helper()
	v, err := application.NewCredentialValidator(context.Background(), application.RepoUserLookup{Users: e.users}, e.hasher, e.hasher)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
