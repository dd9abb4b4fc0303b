package application_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
)

// replica returns the guard of another process over e's stores: it learns
// of revocations only through its own polls of the store.
func (e *authEnv) replica(t *testing.T) *application.Authenticate {
	t.Helper()
	revoked, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: e.refresh, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := application.NewAuthenticate(e.verifier, nil, application.RepoUserLookup{Users: e.users}, revoked, nil)
	if err != nil {
		t.Fatal(err)
	}
	return auth
}

func TestSessionsEndEverywhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, e *authEnv, mine, other domain.TokenPair)
		// otherSurvives tells whether the user's second session lives on.
		otherSurvives bool
	}{
		{"logout", func(t *testing.T, e *authEnv, mine, _ domain.TokenPair) {
			p, err := e.auth.Execute(ctx, mine.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.logout.Execute(ctx, domain.AsPrincipal(p)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"refresh-token reuse", func(t *testing.T, e *authEnv, mine, _ domain.TokenPair) {
			if _, err := e.refresher.Execute(ctx, mine.RefreshToken); err != nil {
				t.Fatal(err)
			}
			if _, err := e.refresher.Execute(ctx, mine.RefreshToken); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("reuse: %v", err)
			}
		}, true},
		{"set-password", func(t *testing.T, e *authEnv, _, _ domain.TokenPair) {
			if _, err := resetByName(ctx, e.admin, "alice", "another password"); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"disable", func(t *testing.T, e *authEnv, _, _ domain.TokenPair) {
			if _, err := patchByName(ctx, e.admin, "alice", application.UserPatch{Active: new(false)}); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name+" ends the session's access tokens here and on another replica", func(t *testing.T) {
			t.Parallel()
			e := newAuthEnv(t, authOpts{})
			e.addUser(t, "alice", pw, true)
			e.addUser(t, "bob", pw, true)
			mine, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
			other, _ := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
			bobs, _ := e.login.Execute(ctx, application.LoginInput{Username: "bob", Password: pw})
			replica := e.replica(t)
			for _, tok := range []string{mine.AccessToken, other.AccessToken, bobs.AccessToken} {
				if _, err := replica.Execute(ctx, tok); err != nil {
					t.Fatalf("before: %v", err)
				}
			}
			tc.end(t, e, mine, other)
			if tc.name == "logout" || tc.name == "refresh-token reuse" {
				// The process that revoked knows at once.
				if _, err := e.auth.Execute(ctx, mine.AccessToken); !errors.Is(err, domain.ErrUnauthenticated) {
					t.Fatalf("this process still accepts the access token: %v", err)
				}
			}
			// The replica learns at its next poll, at most two intervals
			// later when nothing runs its loop.
			e.clock.Advance(2 * background.DefaultRevocationPoll)
			for _, auth := range []*application.Authenticate{e.auth, replica} {
				if _, err := auth.Execute(ctx, mine.AccessToken); !errors.Is(err, domain.ErrUnauthenticated) {
					t.Fatalf("access token of the ended session: %v, want unauthenticated", err)
				}
				_, err := auth.Execute(ctx, other.AccessToken)
				if tc.otherSurvives && err != nil {
					t.Fatalf("another session of the user: %v", err)
				}
				if !tc.otherSurvives && !errors.Is(err, domain.ErrUnauthenticated) {
					t.Fatalf("another session of the user outlives %s: %v", tc.name, err)
				}
				if _, err := auth.Execute(ctx, bobs.AccessToken); err != nil {
					t.Fatalf("another user's session: %v", err)
				}
			}
		})
	}
}

func TestSessionMax(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const sessionMax = 2 * time.Hour
	e := newAuthEnv(t, authOpts{sessionMax: sessionMax, refreshTTL: time.Hour})
	e.addUser(t, "alice", pw, true)
	start := e.clock.Now()
	pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	end := start.Add(sessionMax)
	// Refreshing every 50 minutes never reaches past the session's end.
	for i := range 2 {
		e.clock.Advance(50 * time.Minute)
		if pair, err = e.refresher.Execute(ctx, pair.RefreshToken); err != nil {
			t.Fatalf("refresh %d: %v", i+1, err)
		}
		rc, err := e.verifier.RefreshToken(ctx, pair.RefreshToken)
		if err != nil {
			t.Fatal(err)
		}
		ac, err := e.verifier.AccessToken(ctx, pair.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		if rc.ExpiresAt.After(end) || ac.ExpiresAt.After(end) || !rc.SessionStart.Equal(start) {
			t.Fatalf("refresh %d: refresh exp %v, access exp %v, session start %v; want none after %v and start %v",
				i+1, rc.ExpiresAt, ac.ExpiresAt, rc.SessionStart, end, start)
		}
		if i == 1 && !rc.ExpiresAt.Equal(end) {
			t.Fatalf("second refresh expires at %v, want capped at %v", rc.ExpiresAt, end)
		}
	}
	// Within the leeway after the end the token still verifies, yet the
	// session is over.
	e.clock.Advance(end.Add(2 * time.Second).Sub(e.clock.Now()))
	if _, err := e.refresher.Execute(ctx, pair.RefreshToken); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("refresh past the session maximum: %v, want unauthenticated", err)
	}
	// A new login starts a new session.
	if _, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw}); err != nil {
		t.Fatal(err)
	}
}
