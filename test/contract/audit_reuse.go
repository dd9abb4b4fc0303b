package contract

import (
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// auditReuseWithChanges is the part of AuditWithChanges about the
// refresh.reused event RotateRefresh is given: stored with the family's
// revocation, in its transaction, or not at all, and only when the
// rotation detects reuse.
func auditReuseWithChanges(t *testing.T, newStores func(t *testing.T) AuditStores) {
	t.Helper()
	now := authT0.Add(time.Hour)
	event := func(id string, typ domain.AuditType) domain.AuditEvent {
		return domain.AuditEvent{ID: id, Time: authT0.Add(time.Minute), Type: typ, UserID: "u1", Username: "Alice",
			Address: "192.0.2.7", RequestID: "rid-" + id, Family: "f1"}
	}
	wantEvents := func(t *testing.T, s AuditStores, want ...string) {
		t.Helper()
		got, err := s.Log.Events(t.Context(), ports.AuditFilter{})
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		ids := make([]string, 0, len(got))
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if len(ids) != len(want) {
			t.Fatalf("events %q, want %q", ids, want)
		}
		for i := range want {
			if ids[i] != want[i] {
				t.Fatalf("events %q, want %q", ids, want)
			}
		}
	}
	rotate := func(t *testing.T, s AuditStores, id, next string, at time.Time, grace time.Duration, e domain.AuditEvent) (domain.RefreshVerdict, error) {
		t.Helper()
		rot, err := s.Refresh.RotateRefresh(t.Context(), authPresented(id, "f1", "u1"), authToken(next, "f1", "u1"), at, grace, e)
		return rot.Outcome, err
	}

	t.Run("a reuse stores its event with the family's revocation", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		authSave(t, s.Refresh, authToken("t1", "f1", "u1"))
		authRotate(t, s.Refresh, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		e := event("e1", domain.AuditRefreshReused)
		if v, err := rotate(t, s, "t1", "t3", now, 0, e); err != nil || v != domain.RefreshReused {
			t.Fatalf("a reuse = %s, %v; want Reused", authName(v), err)
		}
		wantEvents(t, s, "e1")
		got, err := s.Log.Events(t.Context(), ports.AuditFilter{})
		if err != nil || len(got) != 1 || got[0].Type != domain.AuditRefreshReused || got[0].Family != "f1" || got[0].RequestID != "rid-e1" {
			t.Fatalf("events %+v, %v; want the refresh.reused event as given", got, err)
		}
		authRotate(t, s.Refresh, "t2", authToken("t4", "f1", "u1"), now, domain.RefreshRefused)
	})

	t.Run("a rotation that detects no reuse stores no event", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		authSave(t, s.Refresh, authToken("t1", "f1", "u1"))
		if v, err := rotate(t, s, "t1", "t2", now, time.Minute, event("rotated", domain.AuditRefreshReused)); err != nil || v != domain.RefreshRotate {
			t.Fatalf("a rotation: %s, %v", authName(v), err)
		}
		if v, err := rotate(t, s, "t1", "t2b", now.Add(time.Second), time.Minute, event("forgiven", domain.AuditRefreshReused)); err != nil || v != domain.RefreshReissue {
			t.Fatalf("a reuse within grace: %s, %v", authName(v), err)
		}
		if rot, err := s.Refresh.RotateRefresh(t.Context(), authPresented("x1", "f9", "u1"), authToken("x2", "f9", "u1"), now, 0,
			event("unknown", domain.AuditRefreshReused)); err != nil || rot.Outcome != domain.RefreshRefused {
			t.Fatalf("a token of an unknown family = %s, %v; want Refused", authName(rot.Outcome), err)
		}
		wantEvents(t, s)
	})

	t.Run("a reuse whose event cannot be stored revokes nothing", func(t *testing.T) {
		t.Parallel()
		s := newStores(t)
		authSave(t, s.Refresh, authToken("t1", "f1", "u1"))
		authRotate(t, s.Refresh, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		taken := event("taken", domain.AuditLoginFailed)
		if err := s.Log.RecordEvent(t.Context(), taken); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
		_, err := rotate(t, s, "t1", "t3", now, 0, event("taken", domain.AuditRefreshReused))
		if err == nil || domain.KindOf(err) == domain.KindUnauthenticated {
			t.Fatalf("a reuse whose event id is taken = %v, want an internal error", err)
		}
		wantEvents(t, s, "taken")
		// The family was not revoked: its live token still rotates.
		authRotate(t, s.Refresh, "t2", authToken("t3", "f1", "u1"), now, domain.RefreshRotate)
	})
}
