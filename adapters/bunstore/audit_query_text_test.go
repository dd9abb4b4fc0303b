package bunstore_test

import (
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// A username or address the audit query takes from a request may hold a
// NUL or bytes that are not UTF-8 (GET /admin/audit?address=%00 answered
// 500 on SQLite, found by test/apifuzz): no stored event has such a
// value, so the query selects nothing, on every engine, without error.
func TestAuditQueryWithTextNoEventHoldsSelectsNothing(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		log := bunstore.NewAuditLog(newDB(t))
		at := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
		if err := log.RecordEvent(t.Context(), domain.AuditEvent{ID: "0190a000-0000-7000-8000-0000000000a1", Type: domain.AuditLogout,
			Time: at, UserID: "0190a000-0000-7000-8000-0000000000b1", Username: "ann", Address: "10.0.0.1"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ name, username, address string }{
			{"a NUL in the username", "ann\x00", ""},
			{"a NUL in the address", "", "10.0.0.1\x00"},
			{"a username that is not UTF-8", "ann\xff", ""},
			{"an address that is not UTF-8", "", "\xff10.0.0.1"},
		} {
			got, err := log.QueryEvents(t.Context(), ports.AuditFilter{Username: tc.username}, tc.address, time.Time{}, ports.AuditCursor{})
			if err != nil || len(got) != 0 {
				t.Errorf("%s: %d events, %v; want none and no error", tc.name, len(got), err)
			}
		}
		got, err := log.QueryEvents(t.Context(), ports.AuditFilter{Username: "ann"}, "10.0.0.1", time.Time{}, ports.AuditCursor{})
		if err != nil || len(got) != 1 {
			t.Errorf("the event by its username and address: %d events, %v; want 1", len(got), err)
		}
	})
}
