package bunstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAuthAuditLog(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.AuditLog(t, func(t *testing.T) ports.AuditLog { return bunstore.NewAuditLog(newDB(t)) })
	})
}

func TestAuthAuditWithChanges(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.AuditWithChanges(t, func(t *testing.T) contract.AuditStores {
			db := newDB(t)
			return contract.AuditStores{Users: bunstore.NewUserRepository(db), Refresh: bunstore.NewRefreshStore(db),
				Keys: bunstore.NewKeyStore(db), Log: bunstore.NewAuditLog(db)}
		})
	})
}

func TestAuthAuditFold(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.AuditFold(t, func(t *testing.T) contract.AuditFoldLog { return bunstore.NewAuditLog(newDB(t)) })
	})
}

// TestAuthAuditFoldHoldsAFloodsAttempts shows what another process sees
// of a flood this one folds: each row's first attempts one by one, then
// the held ones once they span 5 s of event time or once this process
// flushes them (README.md, "Audit trail"). Events flushing first is shown
// by the contract suite (contract.AuditFold) and the flood test.
func TestAuthAuditFoldHoldsAFloodsAttempts(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		db := newDB(t)
		writer, reader := bunstore.NewAuditLog(db), bunstore.NewAuditLog(db)
		fold := domain.DefaultAuditFold
		t0 := fold.Start(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		count := func() int {
			t.Helper()
			es, err := reader.Events(t.Context(), ports.AuditFilter{})
			if err != nil || len(es) != 1 {
				t.Fatalf("events %+v, %v; want one", es, err)
			}
			return es[0].Attempts()
		}
		at := 0 * time.Millisecond
		flood := func(n int, step time.Duration) {
			t.Helper()
			for range n {
				e := domain.AuditEvent{ID: fmt.Sprintf("e%d", at), Time: t0.Add(at), Type: domain.AuditLoginThrottled,
					Username: "x", Address: "203.0.113.1"}
				if err := writer.FoldEvent(t.Context(), e, fold); err != nil {
					t.Fatal(err)
				}
				at += step
			}
		}
		flood(30, 100*time.Millisecond) // 0 to 2.9 s
		// 30 only if this took 5 s of wall time, when the timer writes them.
		if got := count(); got != 10 && got != 30 {
			t.Errorf("another process sees %d attempts of 30 spanning 2.9 s, want the first 10", got)
		}
		flood(40, 100*time.Millisecond) // 3 to 6.9 s: at 6 s, 5 s after the first held, they are written
		if got := count(); got < 61 || got > 70 {
			t.Errorf("another process sees %d attempts of 70 spanning 6.9 s, want 61 at least", got)
		}
		if err := writer.Flush(t.Context()); err != nil { // as storefx does when the service stops
			t.Fatal(err)
		}
		if got := count(); got != 70 {
			t.Errorf("after the writer flushed: %d attempts, want 70", got)
		}
	})
}
