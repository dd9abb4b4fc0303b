package contract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditStores are a user repository, a refresh store and a key store of
// one storage that write the events of their changes into Log
// (ports.ChangeAuditLog). Refresh must also be a ports.RevocationFeed.
type AuditStores struct {
	Users   ports.UserRepository
	Refresh ports.RefreshStore
	Keys    ports.KeyStore
	Log     ports.AuditLog
}

// AuditWithChanges runs the contract of the events parameters of
// ports.UserRepository, ports.RefreshStore and ports.KeyStore: an event
// is stored with the change it records, in its transaction, or not at
// all; and of UserRepository.UpdateUserEndingSessions, whose change,
// revocation of the user's families and events are one transaction.
// newStores must return empty stores of their own on every call; subtests
// run in parallel.
func AuditWithChanges(t *testing.T, newStores func(t *testing.T) AuditStores) {
	t.Helper()
	now := authT0.Add(time.Hour)
	event := func(id string, typ domain.AuditType) domain.AuditEvent {
		return domain.AuditEvent{ID: id, Time: authT0.Add(time.Minute), Type: typ, UserID: "u1", Username: "Alice",
			Address: "192.0.2.7", RequestID: "rid-" + id, Family: "f1"}
	}
	events := func(t *testing.T, s AuditStores) []domain.AuditEvent {
		t.Helper()
		es, err := s.Log.Events(t.Context(), ports.AuditFilter{})
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		return es
	}
	wantEvents := func(t *testing.T, s AuditStores, want ...domain.AuditEvent) {
		t.Helper()
		got := events(t, s)
		if len(got) != len(want) {
			t.Fatalf("events = %+v, want %+v", got, want)
		}
		for i := range want {
			if !got[i].Time.Equal(want[i].Time) {
				t.Errorf("event %d time = %v, want %v", i, got[i].Time, want[i].Time)
			}
			g, w := got[i], want[i]
			g.Time, w.Time = time.Time{}, time.Time{}
			if g != w {
				t.Errorf("event %d = %+v, want %+v", i, g, w)
			}
		}
	}
	user := func(t *testing.T, s AuditStores) (domain.User, error) {
		t.Helper()
		return s.Users.UserByID(t.Context(), "u1")
	}

	t.Run("a user added with its event stores both", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		e := event("e1", domain.AuditUserAdded)
		if err := s.Users.CreateUser(t.Context(), authUser("u1", "Alice"), e); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if _, err := user(t, s); err != nil {
			t.Fatalf("UserByID: %v", err)
		}
		wantEvents(t, s, e)
	})

	t.Run("a user that cannot be added leaves no event", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		if err := s.Users.CreateUser(t.Context(), authUser("u0", "alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		err := s.Users.CreateUser(t.Context(), authUser("u1", "Alice"), event("e1", domain.AuditUserAdded))
		if !errors.Is(err, domain.ErrUserExists) {
			t.Fatalf("CreateUser(taken) = %v, want ErrUserExists", err)
		}
		wantEvents(t, s)
	})

	t.Run("an event that cannot be stored leaves no user", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		e := event("e1", domain.AuditLoginFailed)
		if err := s.Log.RecordEvent(t.Context(), e); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
		// The event id is taken: the event fails after the user was written.
		if err := s.Users.CreateUser(t.Context(), authUser("u1", "Alice"), event("e1", domain.AuditUserAdded)); err == nil {
			t.Fatal("CreateUser with an event id already stored succeeded")
		}
		if _, err := user(t, s); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("UserByID after the failed add = %v, want ErrUserNotFound", err)
		}
		wantEvents(t, s, e)
	})

	t.Run("an update stores its event; a failed one neither", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		if err := s.Users.CreateUser(t.Context(), authUser("u1", "Alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		boom := errors.New("boom")
		_, err := s.Users.UpdateUser(t.Context(), "u1", func(u *domain.User) error { u.Active = false; return boom },
			event("e0", domain.AuditUserDisabled))
		if !errors.Is(err, boom) {
			t.Fatalf("UpdateUser(failing fn) = %v, want boom", err)
		}
		if _, err := s.Users.UpdateUser(t.Context(), "nobody", func(*domain.User) error { return nil },
			event("e00", domain.AuditUserDisabled)); !errors.Is(err, domain.ErrUserNotFound) {
			t.Fatalf("UpdateUser(unknown) = %v, want ErrUserNotFound", err)
		}
		wantEvents(t, s)
		taken := event("taken", domain.AuditLoginFailed)
		if err := s.Log.RecordEvent(t.Context(), taken); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
		if _, err := s.Users.UpdateUser(t.Context(), "u1", func(u *domain.User) error { u.Active = false; return nil },
			event("taken", domain.AuditUserDisabled)); err == nil {
			t.Fatal("UpdateUser with an event id already stored succeeded")
		}
		if u, err := user(t, s); err != nil || !u.Active {
			t.Fatalf("user after the failed update: active %v, err %v; want still active", u.Active, err)
		}
		e := event("e1", domain.AuditUserDisabled)
		if _, err := s.Users.UpdateUser(t.Context(), "u1", func(u *domain.User) error { u.Active = false; return nil }, e); err != nil {
			t.Fatalf("UpdateUser: %v", err)
		}
		if u, err := user(t, s); err != nil || u.Active {
			t.Fatalf("user after the update: active %v, err %v; want disabled", u.Active, err)
		}
		wantEvents(t, s, taken, e) // same time: newest first by id
	})

	t.Run("a family revoked with its event stores both, or neither", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		authSave(t, s.Refresh, authToken("t1", "f1", "u1"))
		taken := event("taken", domain.AuditLoginFailed)
		if err := s.Log.RecordEvent(t.Context(), taken); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
		if err := s.Refresh.RevokeFamily(t.Context(), "f1", now, event("taken", domain.AuditLogout)); err == nil {
			t.Fatal("RevokeFamily with an event id already stored succeeded")
		}
		wantEvents(t, s, taken)
		e := event("e1", domain.AuditLogout)
		if err := s.Refresh.RevokeFamily(t.Context(), "f1", now, e); err != nil {
			t.Fatalf("RevokeFamily: %v", err)
		}
		wantEvents(t, s, taken, e) // same time: newest first by id
		authRotate(t, s.Refresh, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRefused)
	})

	t.Run("a family whose event failed is not revoked", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		authSave(t, s.Refresh, authToken("t1", "f1", "u1"))
		if err := s.Log.RecordEvent(t.Context(), event("taken", domain.AuditLoginFailed)); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
		if err := s.Refresh.RevokeFamily(t.Context(), "f1", now, event("taken", domain.AuditLogout)); err == nil {
			t.Fatal("RevokeFamily with an event id already stored succeeded")
		}
		authRotate(t, s.Refresh, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
	})
	t.Run("a key added with its event stores both, or neither", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		e := event("e1", domain.AuditKeyRotated)
		e.Family = "k1"
		if err := s.Keys.AddSigningKey(t.Context(), authKey("k1", authT0), e); err != nil {
			t.Fatalf("AddSigningKey: %v", err)
		}
		wantEvents(t, s, e)
		// The key id is taken: nothing is stored.
		if err := s.Keys.AddSigningKey(t.Context(), authKey("k1", authT0.Add(time.Hour)), event("e2", domain.AuditKeyRotated)); err == nil {
			t.Fatal("AddSigningKey of a stored key id succeeded")
		}
		// The event id is taken: the event fails after the key was written.
		if err := s.Keys.AddSigningKey(t.Context(), authKey("k2", authT0.Add(time.Hour)), event("e1", domain.AuditKeyRotated)); err == nil {
			t.Fatal("AddSigningKey with an event id already stored succeeded")
		}
		authWantKeys(t, s.Keys, authKey("k1", authT0))
		wantEvents(t, s, e)
	})

	t.Run("a key revoked with its event stores both, or neither", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		authAddKey(t, s.Keys, authKey("k1", authT0))
		if err := s.Keys.RevokeSigningKey(t.Context(), "nope", now, event("e0", domain.AuditKeyRevoked)); !errors.Is(err, domain.ErrSigningKeyNotFound) {
			t.Fatalf("RevokeSigningKey(unknown) = %v, want ErrSigningKeyNotFound", err)
		}
		wantEvents(t, s)
		taken := event("taken", domain.AuditLoginFailed)
		if err := s.Log.RecordEvent(t.Context(), taken); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
		if err := s.Keys.RevokeSigningKey(t.Context(), "k1", now, event("taken", domain.AuditKeyRevoked)); err == nil {
			t.Fatal("RevokeSigningKey with an event id already stored succeeded")
		}
		authWantKeys(t, s.Keys, authKey("k1", authT0))
		e := event("e1", domain.AuditKeyRevoked)
		e.Family = "k1"
		if err := s.Keys.RevokeSigningKey(t.Context(), "k1", now, e); err != nil {
			t.Fatalf("RevokeSigningKey: %v", err)
		}
		revoked := authKey("k1", authT0)
		revoked.RevokedAt = &now
		authWantKeys(t, s.Keys, revoked)
		wantEvents(t, s, taken, e) // same time: newest first by id
	})

	revokedFamilies := func(t *testing.T, s AuditStores) []string {
		t.Helper()
		feed, ok := s.Refresh.(ports.RevocationFeed)
		if !ok {
			t.Fatal("the refresh store is no ports.RevocationFeed")
		}
		fs, err := feed.RevokedFamilies(t.Context(), authT0)
		if err != nil {
			t.Fatalf("RevokedFamilies: %v", err)
		}
		return fs
	}
	sessions := func(t *testing.T, s AuditStores) {
		t.Helper()
		if err := s.Users.CreateUser(t.Context(), authUser("u1", "Alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if err := s.Users.CreateUser(t.Context(), authUser("u2", "Bob")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		authSave(t, s.Refresh, authToken("t1", "f1", "u1"))
		authSave(t, s.Refresh, authToken("t2", "f2", "u1"))
		authSave(t, s.Refresh, authToken("t3", "f3", "u2"))
	}
	disable := func(u *domain.User) error { u.Active = false; return nil }

	t.Run("ending a user's sessions stores the change, the revocation and the event together", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		sessions(t, s)
		e := event("e1", domain.AuditUserDisabled)
		u, err := s.Users.UpdateUserEndingSessions(t.Context(), "u1", now, disable, e)
		if err != nil {
			t.Fatalf("UpdateUserEndingSessions: %v", err)
		}
		if u.Active {
			t.Error("the user returned is still active")
		}
		if u, err := user(t, s); err != nil || u.Active {
			t.Fatalf("user after the update: active %v, err %v; want disabled", u.Active, err)
		}
		if got := revokedFamilies(t, s); !slices.Equal(got, []string{"f1", "f2"}) {
			t.Errorf("revoked families %v, want the user's f1 and f2", got)
		}
		wantEvents(t, s, e)
		authRotate(t, s.Refresh, "t1", authToken("t1b", "f1", "u1"), now, domain.RefreshRefused)
		authRotate(t, s.Refresh, "t3", authToken("t3b", "f3", "u2"), now, domain.RefreshRotate)
	})

	t.Run("ending a user's sessions without events still revokes them", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		sessions(t, s)
		if _, err := s.Users.UpdateUserEndingSessions(t.Context(), "u1", now, disable); err != nil {
			t.Fatalf("UpdateUserEndingSessions: %v", err)
		}
		if got := revokedFamilies(t, s); !slices.Equal(got, []string{"f1", "f2"}) {
			t.Errorf("revoked families %v, want the user's f1 and f2", got)
		}
		wantEvents(t, s)
	})

	t.Run("ending a user's sessions that fails stores none of the three", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		sessions(t, s)
		taken := event("taken", domain.AuditLoginFailed)
		if err := s.Log.RecordEvent(t.Context(), taken); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
		boom := errors.New("boom")
		if _, err := s.Users.UpdateUserEndingSessions(t.Context(), "u1", now,
			func(u *domain.User) error { u.Active = false; return boom }, event("e1", domain.AuditUserDisabled)); !errors.Is(err, boom) {
			t.Fatalf("UpdateUserEndingSessions(failing fn) = %v, want boom", err)
		}
		if _, err := s.Users.UpdateUserEndingSessions(t.Context(), "nobody", now, disable,
			event("e2", domain.AuditUserDisabled)); !errors.Is(err, domain.ErrUserNotFound) {
			t.Fatalf("UpdateUserEndingSessions(unknown) = %v, want ErrUserNotFound", err)
		}
		// The event id is taken: the event fails after the user and the
		// revocation were written.
		if _, err := s.Users.UpdateUserEndingSessions(t.Context(), "u1", now, disable,
			event("taken", domain.AuditUserDisabled)); err == nil {
			t.Fatal("UpdateUserEndingSessions with an event id already stored succeeded")
		}
		// Renaming onto a taken username fails too.
		if _, err := s.Users.UpdateUserEndingSessions(t.Context(), "u1", now,
			func(u *domain.User) error { u.Username = "BOB"; return nil }); !errors.Is(err, domain.ErrUserExists) {
			t.Fatalf("UpdateUserEndingSessions(rename onto bob) = %v, want ErrUserExists", err)
		}
		if u, err := user(t, s); err != nil || !u.Active || u.Username != "Alice" {
			t.Fatalf("user after the failed updates: %q active %v, err %v; want Alice still active", u.Username, u.Active, err)
		}
		if got := revokedFamilies(t, s); len(got) != 0 {
			t.Errorf("revoked families %v after failed updates, want none", got)
		}
		wantEvents(t, s, taken)
		authRotate(t, s.Refresh, "t1", authToken("t1b", "f1", "u1"), now, domain.RefreshRotate)
	})
	t.Run("a user's sessions ended while a family rotates leave it no live token", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		sessions(t, s)
		const most = 5000
		started, last := make(chan struct{}), make(chan string, 1)
		go func() {
			cur := "t1"
			defer func() { last <- cur }()
			for i := range most {
				if i == 3 {
					close(started)
				}
				next := authToken(fmt.Sprintf("t1-%d", i), "f1", "u1")
				if rot, err := s.Refresh.RotateRefresh(context.Background(), authPresented(cur, "f1", "u1"), next, now, 0); err != nil || rot.Outcome != domain.RefreshRotate {
					if i < 3 {
						close(started)
					}
					return
				}
				cur = next.ID
			}
		}()
		<-started
		if _, err := s.Users.UpdateUserEndingSessions(t.Context(), "u1", now, disable); err != nil {
			t.Fatalf("UpdateUserEndingSessions: %v", err)
		}
		// The rotations stop at the first refusal; the token they stopped
		// at is the family's newest and must be revoked too.
		authRotate(t, s.Refresh, <-last, authToken("after", "f1", "u1"), now, domain.RefreshRefused)
	})

	auditReuseWithChanges(t, newStores)
}
