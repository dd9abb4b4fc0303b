package contract

import (
	"fmt"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditLog runs the contract of ports.AuditLog. newLog must return an
// empty log of its own on every call; subtests run in parallel.
func AuditLog(t *testing.T, newLog func(t *testing.T) ports.AuditLog) {
	t.Helper()
	at := func(min int) time.Time { return authT0.Add(time.Duration(min) * time.Minute) }
	event := func(id string, min int, typ domain.AuditType, user string) domain.AuditEvent {
		return domain.AuditEvent{ID: id, Time: at(min), Type: typ, UserID: "u-" + user, Username: user,
			Address: "192.0.2.1", RequestID: "rid-" + id, Family: "fam-" + id, Reason: ""}
	}
	record := func(t *testing.T, l ports.AuditLog, es ...domain.AuditEvent) {
		t.Helper()
		for _, e := range es {
			if err := l.RecordEvent(t.Context(), e); err != nil {
				t.Fatalf("RecordEvent: %v", err)
			}
		}
	}
	ids := func(es []domain.AuditEvent) string {
		var s []string
		for _, e := range es {
			s = append(s, e.ID)
		}
		return fmt.Sprint(s)
	}

	t.Run("events round-trip every field, newest first", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		failed := event("e1", 1, domain.AuditLoginFailed, "Alice")
		failed.Reason = domain.AuditReasonBadPassword
		failed.Time = failed.Time.Add(123456789 * time.Nanosecond).In(time.FixedZone("UTC+2", 7200))
		record(t, l, failed, event("e3", 3, domain.AuditLogout, "bob"), event("e2", 2, domain.AuditLoginSucceeded, "alice"))
		got, err := l.Events(t.Context(), ports.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != "[e3 e2 e1]" {
			t.Fatalf("events %s, want [e3 e2 e1]", ids(got))
		}
		want := failed
		want.Time = domain.Normalize(failed.Time)
		if got[2] != want {
			t.Errorf("round trip %+v, want %+v", got[2], want)
		}
		authWantUTC(t, "time", got[2].Time)
	})

	t.Run("filters select by username as logins compare it, type and time", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		record(t, l, event("e1", 1, domain.AuditLoginFailed, "Alice"), event("e2", 2, domain.AuditLoginSucceeded, "alice"),
			event("e3", 3, domain.AuditLoginFailed, "bob"), event("e4", 4, domain.AuditLoginFailed, " ALICE"))
		for _, tc := range []struct {
			name string
			f    ports.AuditFilter
			want string
		}{
			{"by username", ports.AuditFilter{Username: "alice "}, "[e4 e2 e1]"},
			{"by type", ports.AuditFilter{Type: domain.AuditLoginFailed}, "[e4 e3 e1]"},
			{"since a time, inclusive", ports.AuditFilter{Since: at(2)}, "[e4 e3 e2]"},
			{"all three with a limit", ports.AuditFilter{Username: "ALICE", Type: domain.AuditLoginFailed, Since: at(1), Limit: 1}, "[e4]"},
		} {
			got, err := l.Events(t.Context(), tc.f)
			if err != nil || ids(got) != tc.want {
				t.Errorf("%s: %s, %v; want %s", tc.name, ids(got), err, tc.want)
			}
		}
	})

	t.Run("purging removes events before the time, at most limit at a time", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		record(t, l, event("e1", 1, domain.AuditLogout, "a"), event("e2", 2, domain.AuditLogout, "a"),
			event("e3", 3, domain.AuditLogout, "a"), event("e4", 10, domain.AuditLogout, "a"))
		for _, tc := range []struct{ limit, want int }{{0, 0}, {2, 2}, {2, 1}, {2, 0}} {
			if n, err := l.PurgeEvents(t.Context(), at(5), tc.limit); err != nil || n != tc.want {
				t.Errorf("PurgeEvents(limit %d) = %d, %v; want %d", tc.limit, n, err, tc.want)
			}
		}
		got, _ := l.Events(t.Context(), ports.AuditFilter{})
		if ids(got) != "[e4]" {
			t.Errorf("left %s, want [e4]", ids(got))
		}
	})
}
