package contract

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AdminStores runs the contract of what the admin API asks of a storage
// (docs/admin.md): the admin flag, ports.UserDirectory (Users),
// ports.SessionStore (Refresh) and ports.AuditQueryLog (Log), whose
// stores must implement them. newStores must return empty stores of
// their own on every call, writing the events of their changes into Log;
// subtests run in parallel.
func AdminStores(t *testing.T, newStores func(t *testing.T) AuditStores) {
	t.Helper()
	at := func(min int) time.Time { return authT0.Add(time.Duration(min) * time.Minute) }
	user := func(id, name string, admin bool, min int) domain.User {
		return domain.User{ID: id, Username: name, PasswordHash: "$2b$04$hash", Active: true, Admin: admin,
			DateCreated: at(min), DateUpdated: at(min)}
	}
	add := func(t *testing.T, s AuditStores, us ...domain.User) {
		t.Helper()
		for _, u := range us {
			if err := s.Users.CreateUser(t.Context(), u); err != nil {
				t.Fatalf("CreateUser: %v", err)
			}
		}
	}
	caps := func(t *testing.T, s AuditStores) (ports.UserDirectory, ports.SessionStore, ports.AuditQueryLog) {
		t.Helper()
		dir, ok1 := s.Users.(ports.UserDirectory)
		sess, ok2 := s.Refresh.(ports.SessionStore)
		q, ok3 := s.Log.(ports.AuditQueryLog)
		if !ok1 || !ok2 || !ok3 {
			t.Fatalf("the stores lack a capability: directory %v, sessions %v, audit query %v", ok1, ok2, ok3)
		}
		return dir, sess, q
	}
	uid := func(n int) string { return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }

	t.Run("the admin flag round-trips and updates", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		add(t, s, user(uid(1), "Ada", true, 0), user(uid(2), "Bob", false, 1))
		for id, want := range map[string]bool{uid(1): true, uid(2): false} {
			u, err := s.Users.UserByID(t.Context(), id)
			if err != nil || u.Admin != want {
				t.Errorf("UserByID(%s) admin = %v, %v; want %v", id, u.Admin, err, want)
			}
		}
		u, err := s.Users.UpdateUser(t.Context(), uid(2), func(u *domain.User) error { u.Admin = true; return nil })
		if err != nil || !u.Admin {
			t.Fatalf("UpdateUser: %+v, %v", u, err)
		}
		if u, _ := s.Users.UserByUsername(t.Context(), "bob"); !u.Admin {
			t.Error("the granted admin flag was not stored")
		}
	})

	t.Run("ListUsers lists every user ordered by username", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		dir, _, _ := caps(t, s)
		add(t, s, user(uid(1), "carol", true, 0), user(uid(2), "Alice", false, 1), user(uid(3), "bob", true, 2))
		all, err := dir.ListUsers(t.Context())
		if err != nil || len(all) != 3 || all[0].Username != "Alice" || all[1].Username != "bob" || all[2].Username != "carol" ||
			!all[1].Admin || all[0].Admin {
			t.Fatalf("ListUsers = %v, %v; want Alice, bob (admin), carol", names(all), err)
		}
	})

	t.Run("DeleteUser removes the user, revokes their sessions and stores the event", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		dir, sess, _ := caps(t, s)
		add(t, s, user(uid(1), "gone", false, 0), user(uid(2), "stays", false, 0))
		for i, u := range []string{uid(1), uid(1), uid(2)} {
			if err := s.Refresh.SaveRefresh(t.Context(), domain.RefreshRecord{ID: fmt.Sprint("t", i), FamilyID: fmt.Sprint("f", i),
				UserID: u, IssuedAt: at(1), ExpiresAt: at(600)}); err != nil {
				t.Fatal(err)
			}
		}
		e := domain.AuditEvent{ID: uid(90), Time: at(2), Type: domain.AuditAdminUserDeleted, UserID: uid(1), Username: "gone",
			ActorID: uid(2), ActorUsername: "stays", Detail: "d"}
		if err := dir.DeleteUser(t.Context(), uid(1), at(2), e); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		if _, err := s.Users.UserByID(t.Context(), uid(1)); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("the deleted user: %v", err)
		}
		if l, err := sess.UserSessions(t.Context(), uid(1), at(3)); err != nil || len(l) != 0 {
			t.Errorf("the deleted user's sessions: %d, %v", len(l), err)
		}
		if l, _ := sess.UserSessions(t.Context(), uid(2), at(3)); len(l) != 1 {
			t.Errorf("another user's sessions: %d, want 1", len(l))
		}
		if feed, ok := s.Refresh.(ports.RevocationFeed); ok {
			revoked, _ := feed.RevokedFamilies(t.Context(), at(2))
			if fmt.Sprint(revoked) != "[f0 f1]" {
				t.Errorf("revoked families %v, want [f0 f1]: every replica's guard must learn it", revoked)
			}
		}
		got, err := s.Log.Events(t.Context(), ports.AuditFilter{})
		if err != nil || len(got) != 1 || got[0].ActorID != uid(2) || got[0].ActorUsername != "stays" || got[0].Detail != "d" {
			t.Errorf("events %+v, %v", got, err)
		}
		if err := dir.DeleteUser(t.Context(), uid(1), at(3), domain.AuditEvent{ID: uid(91), Time: at(3), Type: domain.AuditAdminUserDeleted}); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("deleting an unknown user: %v", err)
		}
		if got, _ := s.Log.Events(t.Context(), ports.AuditFilter{}); len(got) != 1 {
			t.Errorf("a refused deletion stored its event: %d events", len(got))
		}
	})

	t.Run("the last active admin cannot be demoted, disabled or deleted", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		dir, _, _ := caps(t, s)
		add(t, s, user(uid(1), "root", true, 0), user(uid(2), "plain", false, 0))
		off := user(uid(3), "offadmin", true, 0)
		off.Active = false
		add(t, s, off)
		e := domain.AuditEvent{ID: uid(90), Time: at(1), Type: domain.AuditUserAdminRevoked, UserID: uid(1)}
		for name, err := range map[string]error{
			"demote": func() error {
				_, err := s.Users.UpdateUser(t.Context(), uid(1), func(u *domain.User) error { u.Admin = false; return nil }, e)
				return err
			}(),
			"disable": func() error {
				_, err := s.Users.UpdateUserEndingSessions(t.Context(), uid(1), at(1), func(u *domain.User) error { u.Active = false; return nil }, e)
				return err
			}(),
			"delete": dir.DeleteUser(t.Context(), uid(1), at(1), e),
		} {
			if !errors.Is(err, domain.ErrLastAdmin) {
				t.Errorf("%s the last active admin: %v, want ErrLastAdmin", name, err)
			}
		}
		if u, err := s.Users.UserByID(t.Context(), uid(1)); err != nil || !u.ActiveAdmin() {
			t.Errorf("the last admin after refused changes: %+v, %v", u, err)
		}
		if got, _ := s.Log.Events(t.Context(), ports.AuditFilter{}); len(got) != 0 {
			t.Errorf("refused changes stored %d events", len(got))
		}
		// Changes that leave an active admin, or concern no active admin,
		// go through.
		if _, err := s.Users.UpdateUser(t.Context(), uid(1), func(u *domain.User) error { u.PasswordHash = "$2b$04$new"; return nil }); err != nil {
			t.Errorf("a new password for the last admin: %v", err)
		}
		if _, err := s.Users.UpdateUser(t.Context(), uid(3), func(u *domain.User) error { u.Admin = false; return nil }); err != nil {
			t.Errorf("demoting a disabled admin: %v", err)
		}
		if err := dir.DeleteUser(t.Context(), uid(2), at(2)); err != nil {
			t.Errorf("deleting a user who is no admin: %v", err)
		}
	})

	t.Run("two admins demoting, disabling or deleting each other at once leave one", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		dir, _, _ := caps(t, s)
		type op func(id string) error
		demote := func(id string) error {
			_, err := s.Users.UpdateUser(t.Context(), id, func(u *domain.User) error { u.Admin = false; return nil })
			return err
		}
		disable := func(id string) error {
			_, err := s.Users.UpdateUserEndingSessions(t.Context(), id, at(1), func(u *domain.User) error { u.Active = false; return nil })
			return err
		}
		del := func(id string) error { return dir.DeleteUser(t.Context(), id, at(1)) }
		pairs := [][2]op{{demote, demote}, {disable, disable}, {demote, disable}, {del, demote}, {disable, del}, {del, del}}
		survivor := ""
		for round := range 30 {
			a, b := uid(100+2*round), uid(101+2*round)
			add(t, s, user(a, fmt.Sprint("a", round), true, 0), user(b, fmt.Sprint("b", round), true, 0))
			if survivor != "" {
				if err := demote(survivor); err != nil {
					t.Fatalf("round %d: demoting the last round's admin with two others: %v", round, err)
				}
			}
			pair := pairs[round%len(pairs)]
			start := make(chan struct{})
			errs := make(chan error, 2)
			for i, id := range []string{a, b} {
				go func() { <-start; errs <- pair[i](id) }()
			}
			close(start)
			err1, err2 := <-errs, <-errs
			if (err1 == nil) == (err2 == nil) || !errors.Is(errors.Join(err1, err2), domain.ErrLastAdmin) {
				t.Fatalf("round %d: the two changes answered %v and %v; want one to succeed, the other ErrLastAdmin", round, err1, err2)
			}
			users, err := listUsers(t, s.Users)
			if err != nil {
				t.Fatal(err)
			}
			var admins []string
			for _, u := range users {
				if u.ActiveAdmin() {
					admins = append(admins, u.ID)
				}
			}
			if len(admins) != 1 {
				t.Fatalf("round %d: %d active admins remain, want 1", round, len(admins))
			}
			survivor = admins[0]
		}
	})

	t.Run("sessions show created, last used, address and agent, live ones only", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		_, sess, _ := caps(t, s)
		save := func(id, fam string, issued, expires int, addr, ua string) {
			t.Helper()
			if err := s.Refresh.SaveRefresh(t.Context(), domain.RefreshRecord{ID: id, FamilyID: fam, UserID: uid(1),
				IssuedAt: at(issued), ExpiresAt: at(expires), Address: addr, UserAgent: ua}); err != nil {
				t.Fatal(err)
			}
		}
		save("a1", "fa", 1, 600, "192.0.2.1", "phone")
		save("b1", "fb", 2, 600, "2001:db8::1", "laptop")
		save("c1", "fc", 3, 5, "192.0.2.3", "old")    // expired at minute 5
		save("d1", "fd", 4, 600, "192.0.2.4", "gone") // revoked below
		if err := s.Refresh.RevokeFamily(t.Context(), "fd", at(5)); err != nil {
			t.Fatal(err)
		}
		next := domain.RefreshRecord{ID: "a2", FamilyID: "fa", UserID: uid(1), IssuedAt: at(7), ExpiresAt: at(700),
			Address: "198.51.100.9", UserAgent: "phone/2"}
		if rot, err := s.Refresh.RotateRefresh(t.Context(), domain.Claims{Kind: domain.RefreshToken, ID: "a1", FamilyID: "fa",
			Subject: uid(1), IssuedAt: at(1), ExpiresAt: at(600)}, next, at(7), 0); err != nil || rot.Outcome != domain.RefreshRotate {
			t.Fatalf("RotateRefresh: %v, %v", rot.Outcome, err)
		}
		l, err := sess.UserSessions(t.Context(), uid(1), at(8))
		if err != nil || len(l) != 2 {
			t.Fatalf("UserSessions = %+v, %v; want fa and fb", l, err)
		}
		a, b := l[0], l[1]
		if a.ID != "fa" || !a.DateCreated.Equal(at(1)) || !a.LastUsed.Equal(at(7)) || a.Address != "198.51.100.9" ||
			a.UserAgent != "phone/2" || !a.ExpiresAt.Equal(at(700)) || a.UserID != uid(1) {
			t.Errorf("the rotated session = %+v", a)
		}
		if b.ID != "fb" || b.Address != "2001:db8::1" || b.UserAgent != "laptop" || !b.LastUsed.Equal(at(2)) {
			t.Errorf("the other session = %+v", b)
		}
		if x, err := sess.Session(t.Context(), "fd"); err != nil || x.RevokedAt == nil || x.UserAgent != "gone" {
			t.Errorf("Session(fd) = %+v, %v; want it, revoked", x, err)
		}
		if _, err := sess.Session(t.Context(), "nope"); !errors.Is(err, domain.ErrSessionNotFound) {
			t.Errorf("Session(nope): %v", err)
		}
		if l, _ := sess.UserSessions(t.Context(), uid(2), at(8)); len(l) != 0 {
			t.Errorf("another user's sessions: %d", len(l))
		}
	})

	t.Run("audit queries translate the conditions on the audit fields and page with a cursor", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		_, _, q := caps(t, s)
		for i := range 5 {
			addr := "192.0.2.1"
			if i%2 == 1 {
				addr = "192.0.2.2"
			}
			// Two events share a time: the id breaks the tie.
			if err := s.Log.RecordEvent(t.Context(), domain.AuditEvent{ID: uid(10 + i), Time: at(min(i, 3)), Type: domain.AuditAdminUserUpdated,
				Username: "x", Address: addr, ActorID: uid(1), ActorUsername: "ada", Detail: fmt.Sprint("n=", i)}); err != nil {
				t.Fatal(err)
			}
		}
		cond := func(f domain.QueryField, op domain.QueryOp, values ...string) domain.Filter {
			c, err := domain.AuditFields.Condition("filter", f, op, false, values)
			if err != nil {
				t.Fatal(err)
			}
			return domain.Where(c)
		}
		stamp := func(i int) string { return at(i).Format(time.RFC3339Nano) }
		for _, tc := range []struct {
			name string
			f    domain.Filter
			want []string
		}{
			{"by address", cond(domain.FieldAddress, domain.OpEq, "192.0.2.2"), []string{uid(13), uid(11)}},
			{"since 1 until 3", domain.AllOf(cond(domain.FieldTime, domain.OpGte, stamp(1)), cond(domain.FieldTime, domain.OpLt, stamp(3))),
				[]string{uid(12), uid(11)}},
			{"between 1 and 2", cond(domain.FieldTime, domain.OpBetween, stamp(1), stamp(2)), []string{uid(12), uid(11)}},
			{"not at 3", cond(domain.FieldTime, domain.OpNe, stamp(3)), []string{uid(12), uid(11), uid(10)}},
			{"an address in a set", cond(domain.FieldAddress, domain.OpIn, "192.0.2.9", "192.0.2.2"), []string{uid(13), uid(11)}},
			{"an address not in a set", cond(domain.FieldAddress, domain.OpNotIn, "192.0.2.2"), []string{uid(14), uid(12), uid(10)}},
			{"a username as logins compare it", cond(domain.FieldUsername, domain.OpEq, " X "), []string{uid(14), uid(13), uid(12), uid(11), uid(10)}},
			{"another username", cond(domain.FieldUsername, domain.OpNe, "x"), nil},
			{"a type", cond(domain.FieldType, domain.OpEq, string(domain.AuditLogout)), nil},
			{"either of two", domain.AnyOf(cond(domain.FieldTime, domain.OpLte, stamp(0)), cond(domain.FieldAddress, domain.OpEq, "192.0.2.2")),
				[]string{uid(13), uid(11), uid(10)}},
			{"none of nothing", domain.AnyOf(), nil},
		} {
			got, err := q.QueryEvents(t.Context(), ports.AuditQuery{Filter: tc.f})
			if err != nil || ids(got) != fmt.Sprint(tc.want) {
				t.Errorf("%s = %v, %v; want %v", tc.name, ids(got), err, tc.want)
			}
		}
		var paged []string
		cur := ports.AuditCursor{}
		for range 10 {
			page, err := q.QueryEvents(t.Context(), ports.AuditQuery{Limit: 2, Before: cur})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, e := range page {
				paged = append(paged, e.ID)
			}
			last := page[len(page)-1]
			cur = ports.AuditCursor{Time: last.Time, ID: last.ID}
		}
		if fmt.Sprint(paged) != fmt.Sprint([]string{uid(14), uid(13), uid(12), uid(11), uid(10)}) {
			t.Errorf("paged = %v", paged)
		}
		got, err := q.QueryEvents(t.Context(), ports.AuditQuery{Filter: cond(domain.FieldTime, domain.OpEq, stamp(2))})
		if err != nil || len(got) != 1 || got[0].ActorUsername != "ada" || got[0].Detail != "n=2" {
			t.Errorf("the actor and detail round-trip: %+v", got[0])
		}
	})
}

func names(us []domain.User) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Username
	}
	return out
}

func ids(es []domain.AuditEvent) string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return fmt.Sprint(out)
}
