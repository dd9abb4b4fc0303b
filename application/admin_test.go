package application_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// adminFixture is the admin use cases over memstore with a manual clock,
// the auditor writing into the stores' own log.
type adminFixture struct {
	clock   interface{ Advance(time.Duration) }
	auditor *application.AuditTrail
	users   *memstore.UserRepository
	refresh *memstore.RefreshStore
	log     *memstore.AuditLog
	ua      *application.Users
	check   *application.AdminCheck
	admin   *application.Users
	audit   *application.AuditTrail
	self    *application.SelfService
	login   *application.Login
}

const adminTestPassword = "a password of 27 bytes long"

func newAdminFixture(t *testing.T) *adminFixture {
	t.Helper()
	ctx := context.Background()
	clock, ids := newClock(), &seqIDs{}
	f := &adminFixture{clock: clock, log: memstore.NewAuditLog()}
	f.refresh = memstore.NewRefreshStore(f.log)
	f.users = memstore.NewUserRepository(f.log, f.refresh)
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	auditor := application.NewAuditTrail(application.AuditTrailDeps{Store: f.log, Clock: clock, IDs: ids, StoredWithChanges: true})
	f.auditor, f.audit = auditor, auditor
	tokens, err := josejwt.New(ctx, josejwt.Options{Keys: memstore.NewKeyStore(nil), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	lookup := application.RepoUserLookup{Users: f.users}
	validator, err := application.NewCredentialValidator(ctx, lookup, hasher, hasher)
	if err != nil {
		t.Fatal(err)
	}
	f.login, err = application.NewLogin(application.LoginDeps{Validator: validator, Audit: auditor,
		Tokens:   application.TokenDeps{Issuer: tokens.Issuer(), Refresh: f.refresh, Clock: clock, IDs: ids},
		Throttle: memstore.NewLoginThrottle(), Limits: application.ThrottleLimits{PerUsername: 3, PerAddress: 100, Window: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if f.check, err = application.NewAdminCheck(f.users, clock); err != nil {
		t.Fatal(err)
	}
	deps := application.UsersDeps{Users: f.users, Hasher: hasher, Clock: clock, IDs: ids, Audit: auditor, Check: f.check, Refresh: f.refresh}
	if f.admin, err = application.NewUsers(deps); err != nil {
		t.Fatal(err)
	}
	// f.ua is the command line's, another process with a check of its own.
	if deps.Check, err = application.NewAdminCheck(f.users, clock); err != nil {
		t.Fatal(err)
	}
	if f.ua, err = application.NewUsers(deps); err != nil {
		t.Fatal(err)
	}
	if f.self, err = application.NewSelfService(f.login, f.ua, f.refresh, nil); err != nil {
		t.Fatal(err)
	}
	return f
}

// patchByName changes the user named name as the command line does.
func patchByName(ctx context.Context, users *application.Users, name string, p application.UserPatch) (domain.User, error) {
	u, err := users.ByUsername(ctx, name)
	if err != nil {
		return u, err
	}
	return users.Patch(ctx, domain.System(), u.ID, p)
}

// resetByName sets the password of the user named name as the command
// line does.
func resetByName(ctx context.Context, users *application.Users, name, password string) (domain.User, error) {
	u, err := users.ByUsername(ctx, name)
	if err != nil {
		return u, err
	}
	return u, users.ResetPassword(ctx, domain.System(), u.ID, password)
}

func (f *adminFixture) add(t *testing.T, name string, admin bool) domain.Principal {
	t.Helper()
	u, err := f.ua.Add(context.Background(), domain.System(), application.AddUserInput{Username: name, Password: adminTestPassword, Active: true, Admin: admin})
	if err != nil {
		t.Fatal(err)
	}
	return domain.Principal{ID: u.ID, Username: u.Username}
}

// loginAs signs in and returns the principal with the session's family.
func (f *adminFixture) loginAs(t *testing.T, p domain.Principal) domain.Principal {
	t.Helper()
	ctx := context.Background()
	if _, err := f.login.Execute(ctx, application.LoginInput{Username: p.Username, Password: adminTestPassword, ClientAddr: "192.0.2.9"}); err != nil {
		t.Fatal(err)
	}
	list, err := f.refresh.UserSessions(ctx, p.ID, time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	if err != nil || len(list) == 0 {
		t.Fatalf("no session after login: %v", err)
	}
	p.FamilyID = list[0].ID
	return p
}

// The admin check trusts what it read for less than a second: a revoked
// admin keeps the rights until then, not after (docs/admin.md).
func TestAdminCheckRemembersTheStoreForLessThanASecond(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	p := f.add(t, "ada", true)
	f.add(t, "keeper", true) // at least one active admin remains
	actor := domain.AsPrincipal(p)
	if err := f.check.Require(ctx, actor); err != nil {
		t.Fatalf("an admin: %v", err)
	}
	if _, err := patchByName(ctx, f.ua, "ada", application.UserPatch{Admin: new(false)}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(999 * time.Millisecond)
	if err := f.check.Require(ctx, actor); err != nil {
		t.Errorf("within the second the remembered answer stands: %v", err)
	}
	f.clock.Advance(time.Millisecond)
	if err := f.check.Require(ctx, actor); !errors.Is(err, domain.ErrForbidden) {
		t.Errorf("after a second: %v, want ErrForbidden", err)
	}
	if err := f.check.Require(ctx, domain.Anonymous()); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("anonymous: %v", err)
	}
	events, _ := f.log.Events(ctx, ports.AuditFilter{Type: domain.AuditUserAdminRevoked})
	if len(events) != 1 || events[0].Username != "ada" {
		t.Errorf("user.admin_revoked events %+v", events)
	}
}

// Admin changes are recorded with the acting admin, in the change's
// transaction; an admin cannot lock themself out.
func TestAdminChangesNameTheActingAdmin(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	root := f.add(t, "root", true)
	bob := f.loginAs(t, f.add(t, "bob", false))
	off := false
	if _, err := f.admin.Patch(ctx, domain.AsPrincipal(root), bob.ID, application.UserPatch{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if list, _ := f.refresh.UserSessions(ctx, bob.ID, time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)); len(list) != 0 {
		t.Errorf("a disabled user keeps %d sessions", len(list))
	}
	events, _ := f.log.Events(ctx, ports.AuditFilter{Type: domain.AuditUserDisabled})
	if len(events) != 1 || events[0].ActorID != root.ID || events[0].ActorUsername != "root" || events[0].UserID != bob.ID {
		t.Errorf("user.disabled %+v", events)
	}
	for name, err := range map[string]error{
		"disable self": func() error {
			_, err := f.admin.Patch(ctx, domain.AsPrincipal(root), root.ID, application.UserPatch{Active: &off})
			return err
		}(),
		"demote self": func() error {
			_, err := f.admin.Patch(ctx, domain.AsPrincipal(root), root.ID, application.UserPatch{Admin: &off})
			return err
		}(),
		"delete self": f.admin.Delete(ctx, domain.AsPrincipal(root), root.ID),
	} {
		if !errors.Is(err, domain.ErrOwnAdminChange) {
			t.Errorf("%s: %v, want ErrOwnAdminChange", name, err)
		}
	}
	if err := f.admin.Delete(ctx, domain.AsPrincipal(root), bob.ID); err != nil {
		t.Fatal(err)
	}
	if events, _ := f.log.Events(ctx, ports.AuditFilter{Type: domain.AuditUserDeleted}); len(events) != 1 || events[0].ActorID != root.ID {
		t.Errorf("user.deleted %+v", events)
	}
}

// A watch delivers the events stored after it started, each once, oldest
// first; a page's cursor continues where it stopped.
func TestAuditTrailWatchAndPages(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	f.add(t, "before", false)
	w, err := f.audit.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	f.add(t, "after1", false)
	f.add(t, "after2", false)
	got, err := w.Next(ctx)
	if err != nil || len(got) != 2 || got[0].Username != "after1" || got[1].Username != "after2" {
		t.Fatalf("watch = %+v, %v; want after1, after2", got, err)
	}
	if again, _ := w.Next(ctx); len(again) != 0 {
		t.Errorf("delivered again: %+v", again)
	}
	page, next, err := f.audit.Page(ctx, application.AuditPageInput{Filter: ports.AuditFilter{Type: domain.AuditUserAdded}.Where(), Limit: 2})
	if err != nil || len(page) != 2 || next == nil || page[0].Username != "after2" {
		t.Fatalf("first page %+v, next %v, %v", page, next, err)
	}
	page, next, err = f.audit.Page(ctx, application.AuditPageInput{Filter: ports.AuditFilter{Type: domain.AuditUserAdded}.Where(), Limit: 2, Before: *next})
	if err != nil || len(page) != 1 || next != nil || page[0].Username != "before" {
		t.Errorf("last page %+v, next %v, %v", page, next, err)
	}
	if _, _, err := f.audit.Page(ctx, application.AuditPageInput{Limit: 1001}); err == nil {
		t.Error("a limit of 1001 was accepted")
	}
}

// Changing one's password needs the current one, counts a wrong one like
// a failed login, and ends every other session of the caller.
func TestChangePasswordEndsTheOtherSessions(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	p := f.add(t, "carol", false)
	here := f.loginAs(t, p)
	f.clock.Advance(time.Second)
	if _, err := f.login.Execute(ctx, application.LoginInput{Username: "carol", Password: adminTestPassword}); err != nil {
		t.Fatal(err)
	}
	in := application.ChangePasswordInput{Actor: domain.AsPrincipal(here), CurrentPassword: "wrong password 27", NewPassword: "new password 27!", ClientAddr: "192.0.2.9"}
	for i := range 3 {
		if err := f.self.ChangePassword(ctx, in); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("wrong password %d: %v", i, err)
		}
	}
	in.CurrentPassword = adminTestPassword
	var de *domain.Error
	if err := f.self.ChangePassword(ctx, in); !errors.As(err, &de) || de.Kind != domain.KindTooMany {
		t.Fatalf("past the username limit, even the right password: %v, want TooMany", err)
	}
	f.clock.Advance(2 * time.Hour)
	if err := f.self.ChangePassword(ctx, in); err != nil {
		t.Fatalf("change: %v", err)
	}
	list, _ := f.refresh.UserSessions(ctx, p.ID, time.Date(2026, 11, 25, 12, 0, 2, 0, time.UTC))
	if len(list) != 1 || list[0].ID != here.FamilyID {
		t.Errorf("sessions after the change: %+v, want only the caller's", list)
	}
	if _, err := f.login.Execute(ctx, application.LoginInput{Username: "carol", Password: "new password 27!"}); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
	failed, _ := f.log.Events(ctx, ports.AuditFilter{Type: domain.AuditLoginFailed})
	if len(failed) == 0 {
		t.Error("wrong current passwords left no login.failed event")
	}
}

// HasAdmin counts only an active admin: a disabled one cannot sign in.
func TestHasAdminCountsOnlyAnActiveAdmin(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	want := func(step string, expect bool) {
		t.Helper()
		if got, err := f.admin.HasAdmin(ctx); err != nil || got != expect {
			t.Errorf("%s: HasAdmin = %v, %v; want %v", step, got, err, expect)
		}
	}
	want("no user", false)
	f.add(t, "bob", false)
	want("a user who is not an admin", false)
	// Created disabled: the last active admin could not be disabled.
	if _, err := f.ua.Add(ctx, domain.System(), application.AddUserInput{Username: "root", Password: adminTestPassword, Admin: true}); err != nil {
		t.Fatal(err)
	}
	want("a disabled admin", false)
	if _, err := patchByName(ctx, f.ua, "root", application.UserPatch{Active: new(true)}); err != nil {
		t.Fatal(err)
	}
	want("an active admin", true)
}

// Users.List filters, sorts, pages and counts in the application, with
// the list query language's one evaluator, whatever the store
// (docs/admin.md).
func TestUsersListFiltersSortsPagesAndCounts(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	for _, u := range []struct {
		name  string
		admin bool
	}{{"carol", true}, {"Alice", false}, {"bob", true}} {
		f.add(t, u.name, u.admin)
		f.clock.Advance(time.Second)
	}
	cond := func(field domain.QueryField, op domain.QueryOp, fold bool, v ...string) domain.Filter {
		t.Helper()
		c, err := domain.UserFields.Condition("filter", field, op, fold, v)
		if err != nil {
			t.Fatal(err)
		}
		return domain.Where(c)
	}
	names := func(us []domain.User) (out []string) {
		for _, u := range us {
			out = append(out, u.Username)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		q         application.UserList
		want      []string
		wantTotal int
	}{
		{"admins by username", application.UserList{Filter: cond(domain.FieldAdmin, domain.OpEq, false, "true")}, []string{"bob", "carol"}, 2},
		{"the second newest", application.UserList{Sort: []domain.SortKey{{Field: domain.FieldDateCreated, Desc: true}}, Limit: 1, Offset: 1},
			[]string{"Alice"}, 3},
		{"username $contL LI", application.UserList{Filter: cond(domain.FieldUsername, domain.OpCont, true, "LI")}, []string{"Alice"}, 1},
		{"filter OR or, as the cache lists combine them", application.UserList{Filter: domain.AnyOf(
			cond(domain.FieldAdmin, domain.OpEq, false, "false"), cond(domain.FieldUsername, domain.OpStarts, false, "c"))},
			[]string{"Alice", "carol"}, 2},
	} {
		page, total, err := f.admin.List(ctx, tc.q)
		if err != nil || total != tc.wantTotal || !slices.Equal(names(page), tc.want) {
			t.Errorf("%s: %v (total %d, %v); want %v (total %d)", tc.name, names(page), total, err, tc.want, tc.wantTotal)
		}
	}
}

// The request's client is an input, not a context value: the session
// records the address and User-Agent of LoginInput, and an admin's
// change is recorded from the address of the actor's client.
func TestTheClientIsAnInputOfTheUseCases(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background() // carries no request facts
	root := f.add(t, "root", true)
	u := f.add(t, "ada", false)
	if _, err := f.login.Execute(ctx, application.LoginInput{Username: "ada", Password: adminTestPassword,
		ClientAddr: "198.51.100.7", UserAgent: "agent/1.0"}); err != nil {
		t.Fatal(err)
	}
	list, err := f.refresh.UserSessions(ctx, u.ID, time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	if err != nil || len(list) != 1 || list[0].Address != "198.51.100.7" || list[0].UserAgent != "agent/1.0" {
		t.Fatalf("sessions %+v, %v; want one from 198.51.100.7, agent/1.0", list, err)
	}
	actor := domain.AsPrincipal(root).From(domain.Client{Address: "203.0.113.9", UserAgent: "console"})
	if err := f.admin.RevokeSessions(ctx, actor, u.ID); err != nil {
		t.Fatal(err)
	}
	events, err := f.log.Events(ctx, ports.AuditFilter{Type: domain.AuditSessionRevoked})
	if err != nil || len(events) != 1 || events[0].Address != "203.0.113.9" || events[0].ActorID != root.ID {
		t.Fatalf("session.revoked events %+v, %v; want one from 203.0.113.9 by root", events, err)
	}
}
