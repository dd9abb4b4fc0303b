package application_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// A user signs out only their own sessions: another user's session id is
// answered as unknown, and that session stays live (docs/admin.md).
func TestAUserCannotRevokeAnotherUsersSession(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	alice := f.loginAs(t, f.add(t, "alice", false))
	bob := f.loginAs(t, f.add(t, "bob", false))

	if err := f.self.RevokeSession(ctx, domain.AsPrincipal(bob), alice.FamilyID); !errors.Is(err, domain.ErrSessionNotFound) {
		t.Fatalf("bob revoking alice's session: %v, want %v", err, domain.ErrSessionNotFound)
	}
	if !liveSession(t, f.self, alice) {
		t.Fatal("alice's session ended when bob revoked it")
	}
	if err := f.self.RevokeSession(ctx, domain.AsPrincipal(alice), alice.FamilyID); err != nil {
		t.Fatalf("alice revoking her own session: %v", err)
	}
	if liveSession(t, f.self, alice) {
		t.Fatal("alice's session is still live after she revoked it")
	}
	if !liveSession(t, f.self, bob) {
		t.Fatal("bob's session ended with alice's")
	}
}

// liveSession reports whether p's session (p.FamilyID) is among p's live
// sessions.
func liveSession(t *testing.T, self *application.SelfService, p domain.Principal) bool {
	t.Helper()
	list, err := self.Sessions(context.Background(), domain.AsPrincipal(p), application.SessionPage{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(list.Page, func(s domain.Session) bool { return s.ID == p.FamilyID })
}
