package application_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
)

// cappedLogin is a login of e bounded to max sessions per user (0: the
// default), telling e's revoked sessions of what it ends, with its audit
// trail the returned log.
func cappedLogin(t *testing.T, e *authEnv, max int) (*application.Login, *memstore.AuditLog) {
	t.Helper()
	log := memstore.NewAuditLog()
	validator, err := application.NewCredentialValidator(context.Background(), application.RepoUserLookup{Users: e.users}, e.hasher, e.hasher)
	if err != nil {
		t.Fatal(err)
	}
	login, err := application.NewLogin(application.LoginDeps{Validator: validator, Tokens: e.tokens, MaxSessions: max,
		Revoked: e.revoked, Audit: application.NewAuditTrail(application.AuditTrailDeps{Store: log, Clock: e.clock, IDs: &seqIDs{}})})
	if err != nil {
		t.Fatal(err)
	}
	return login, log
}

func evictedEvents(t *testing.T, log *memstore.AuditLog) []domain.AuditEvent {
	t.Helper()
	var out []domain.AuditEvent
	for _, ev := range auditEvents(t, log) {
		if ev.Type == domain.AuditSessionEvicted {
			out = append(out, ev)
		}
	}
	return out
}

func TestTheLoginPastTheSessionCapEndsTheLeastRecentlyUsedSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAuthEnv(t, authOpts{})
	alice := e.addUser(t, "alice", pw, true)
	login, log := cappedLogin(t, e, 0)
	in := application.LoginInput{Username: "alice", Password: pw, ClientAddr: "192.0.2.7"}
	pairs := make([]domain.TokenPair, 0, application.DefaultMaxSessionsPerUser)
	for range application.DefaultMaxSessionsPerUser {
		p, err := login.Execute(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p)
		e.clock.Advance(time.Second)
	}
	// A refresh is a use: the first session is now the last used, so the
	// least recently used is the second.
	first, err := e.refresher.Execute(ctx, pairs[0].RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	lru := pairs[1]
	if got := evictedEvents(t, log); len(got) != 0 {
		t.Fatalf("%d logins evicted %d sessions, want none", application.DefaultMaxSessionsPerUser, len(got))
	}
	replica := e.replica(t)
	if _, err := replica.Execute(ctx, lru.AccessToken); err != nil {
		t.Fatalf("before: %v", err)
	}

	if _, err := login.Execute(ctx, in); err != nil {
		t.Fatalf("login %d: %v", application.DefaultMaxSessionsPerUser+1, err)
	}
	if live, _ := e.refresh.UserSessions(ctx, alice.ID, e.clock.Now()); len(live) != application.DefaultMaxSessionsPerUser {
		t.Errorf("live sessions = %d, want %d", len(live), application.DefaultMaxSessionsPerUser)
	}
	sid := jtiFamily(t, e, lru.AccessToken)
	events := evictedEvents(t, log)
	if len(events) != 1 || events[0].Family != sid || events[0].UserID != alice.ID || events[0].Username != "alice" ||
		events[0].Address != "192.0.2.7" {
		t.Fatalf("session.evicted events = %+v, want one for %s", events, sid)
	}
	// Its access token is refused here at once, and by the other replica
	// at its next poll; its refresh token is refused.
	if _, err := e.auth.Execute(ctx, lru.AccessToken); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("this process accepts the evicted session's access token: %v", err)
	}
	e.clock.Advance(2 * background.DefaultRevocationPoll)
	if _, err := replica.Execute(ctx, lru.AccessToken); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("another replica accepts the evicted session's access token: %v", err)
	}
	if _, err := e.refresher.Execute(ctx, lru.RefreshToken); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("the evicted session refreshes: %v", err)
	}
	// The refreshed first session and the third live on.
	for _, tok := range []string{first.AccessToken, pairs[2].AccessToken} {
		if _, err := replica.Execute(ctx, tok); err != nil {
			t.Errorf("a session that was used later: %v", err)
		}
	}
	if _, err := e.refresher.Execute(ctx, first.RefreshToken); err != nil {
		t.Errorf("the refreshed first session: %v", err)
	}
}

func TestConcurrentLoginsAtTheSessionCapLeaveTheCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const max, n = 5, 20
	e := newAuthEnv(t, authOpts{})
	alice := e.addUser(t, "alice", pw, true)
	login, log := cappedLogin(t, e, max)
	in := application.LoginInput{Username: "alice", Password: pw}
	for range max {
		if _, err := login.Execute(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = login.Execute(ctx, in) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("login %d: %v", i, err)
		}
	}
	if live, _ := e.refresh.UserSessions(ctx, alice.ID, e.clock.Now()); len(live) != max {
		t.Errorf("live sessions = %d, want %d", len(live), max)
	}
	if got := evictedEvents(t, log); len(got) != n {
		t.Errorf("session.evicted events = %d, want %d", len(got), n)
	}
}

// jtiFamily returns the session (sid) of an access token.
func jtiFamily(t *testing.T, e *authEnv, access string) string {
	t.Helper()
	c, err := e.verifier.AccessToken(context.Background(), access)
	if err != nil {
		t.Fatal(err)
	}
	return c.FamilyID
}
