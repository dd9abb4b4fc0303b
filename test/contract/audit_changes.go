package contract

import (
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditStores are a user repository and a refresh store that write the
// events of their changes into Log (ports.ChangeAuditLog).
type AuditStores struct {
	Users   ports.UserRepository
	Refresh ports.RefreshStore
	Log     ports.AuditLog
}

// AuditWithChanges runs the contract of the events parameters of
// ports.UserRepository and ports.RefreshStore: an event is stored with
// the change it records, in its transaction, or not at all. newStores
// must return empty stores of their own on every call; subtests run in
// parallel.
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
		authRotate(t, s.Refresh, "t1", authToken("t2", "f1", "u1"), now, domain.ErrUnauthenticated)
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
		authRotate(t, s.Refresh, "t1", authToken("t2", "f1", "u1"), now, nil)
	})

	auditReuseWithChanges(t, newStores)
}
