package application_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// countingLookup counts the subjects it is asked for.
type countingLookup struct {
	ports.UserLookup
	asked atomic.Int32
}

func (l *countingLookup) BySubject(ctx context.Context, subject string) (domain.Principal, error) {
	l.asked.Add(1)
	return l.UserLookup.BySubject(ctx, subject)
}

// TestRefreshRemembersSubjects: with SubjectTTL a refresh asks the lookup
// once per subject and TTL, and a user disabled meanwhile refreshes no
// more although the principal is remembered: disabling revoked the
// user's families.
func TestRefreshRemembersSubjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAuthEnv(t, authOpts{})
	alice := e.addUser(t, "alice", pw, true)
	lookup := &countingLookup{UserLookup: application.RepoUserLookup{Users: e.users}}
	r, err := application.NewRefresh(application.RefreshDeps{Verifier: e.verifier, Lookup: lookup, Tokens: e.tokens,
		Revoked: e.revoked, SubjectTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	token := e.loginAlice(t).RefreshToken
	for range 3 {
		pair, err := r.Execute(ctx, token, domain.Client{})
		if err != nil {
			t.Fatal(err)
		}
		token = pair.RefreshToken
	}
	if n := lookup.asked.Load(); n != 1 {
		t.Errorf("three refreshes within the TTL asked the lookup %d times, want 1", n)
	}
	e.clock.Advance(1100 * time.Millisecond)
	pair, err := r.Execute(ctx, token, domain.Client{})
	if err != nil {
		t.Fatal(err)
	}
	token = pair.RefreshToken
	if n := lookup.asked.Load(); n != 2 {
		t.Errorf("a refresh after the TTL: the lookup asked %d times in all, want 2", n)
	}

	inactive := false
	if _, err := e.admin.Patch(ctx, domain.System(), alice.ID, application.UserPatch{Active: &inactive}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(ctx, token, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("refresh of a user disabled within the TTL = %v, want ErrUnauthenticated", err)
	}
	if n := lookup.asked.Load(); n != 2 {
		t.Errorf("the lookup asked %d times in all, want 2: the principal was still remembered", n)
	}
}
