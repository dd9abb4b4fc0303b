package bunstore_test

import (
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// A username an audit filter is given (the command line's --user) may
// hold a NUL or bytes that are not UTF-8, which must not reach the driver
// (SQLite reads a NUL as the end of the statement; the admin API refuses
// such values, domain.AuditFields): no stored event has such a value, so
// the query selects nothing, on every engine, without error.
func TestAuditQueryWithTextNoEventHoldsSelectsNothing(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		log := bunstore.NewAuditLog(newDB(t))
		at := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
		if err := log.RecordEvent(t.Context(), domain.AuditEvent{ID: "0190a000-0000-7000-8000-0000000000a1", Type: domain.AuditLogout,
			Time: at, UserID: "0190a000-0000-7000-8000-0000000000b1", Username: "ann", Address: "10.0.0.1"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ name, username string }{
			{"a NUL in the username", "ann\x00"},
			{"a username that is not UTF-8", "ann\xff"},
		} {
			got, err := log.Events(t.Context(), ports.AuditFilter{Username: tc.username})
			if err != nil || len(got) != 0 {
				t.Errorf("%s: %d events, %v; want none and no error", tc.name, len(got), err)
			}
		}
		got, err := log.Events(t.Context(), ports.AuditFilter{Username: "ANN"})
		if err != nil || len(got) != 1 {
			t.Errorf("the event by its username: %d events, %v; want 1", len(got), err)
		}
	})
}
