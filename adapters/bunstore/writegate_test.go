package bunstore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/cachegate/cachegate/domain"
)

func TestWriteGate(t *testing.T) {
	t.Parallel()
	a := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	b := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "b.db"))
	if a.gate == nil || a.gate != a.gate {
		t.Fatal("an SQLite database must have one gate")
	}
	if a.gate == b.gate {
		t.Fatal("two databases must not share a gate")
	}
	leave, err := writegate.Enter(t.Context(), a.gate, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := writegate.Enter(ctx, a.gate, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second writer while the gate is held: %v, want to wait until its context ends", err)
	}
	if other, err := writegate.Enter(t.Context(), b.gate, nil); err != nil {
		t.Fatalf("another database's writer must not wait: %v", err)
	} else {
		other()
	}
	leave()
	again, err := writegate.Enter(t.Context(), a.gate, nil)
	if err != nil {
		t.Fatalf("after leaving, the next writer enters: %v", err)
	}
	again()
	if leave, err := writegate.Enter(t.Context(), nil, nil); err != nil {
		t.Fatal(err)
	} else {
		leave()
	}
}

// The gate belongs to the handle Open made: a second handle on the same
// file has its own (it waits in SQLite's busy handler, as another process
// does).
func TestWriteGateBelongsToTheHandle(t *testing.T) {
	t.Parallel()
	path := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	first, second := openTestDB(t, path), openTestDB(t, path)
	if first.gate == nil || first.gate == second.gate {
		t.Error("two handles from Open must each have a gate of their own")
	}
}

// Single-statement writes queue at the write gate like the transactions
// and the groups: a write waiting in SQLite's busy handler instead is
// overtaken by every writer the gate lets in, and starves behind a queue
// of grouped writes. While the gate is held, each waits until its bound
// ends and stores nothing; once the gate is free, it writes.
func TestSingleStatementWritesQueueAtTheWriteGate(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "gate.db"))
	if err := Migrate(t.Context(), db, []string{"user_cache"}); err != nil {
		t.Fatal(err)
	}
	throttle, audit := NewLoginThrottle(db), NewAuditLog(db)
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	event := domain.AuditEvent{ID: "0190a000-0000-7000-8000-0000000000a1", Type: domain.AuditLogout,
		Time: at, UserID: "0190a000-0000-7000-8000-0000000000b1", Username: "ann", Address: "10.0.0.1"}
	writes := map[string]func(ctx context.Context) error{
		"a login failure": func(ctx context.Context) error { return throttle.RecordFailure(ctx, "k", at) },
		"an audit event":  func(ctx context.Context) error { return audit.RecordEvent(ctx, event) },
	}
	leave, err := writegate.Enter(t.Context(), db.gate, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range writes {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		err := write(ctx)
		cancel()
		if err == nil {
			t.Errorf("%s written while another writer held the gate, want it to wait its turn", name)
		}
	}
	if n, _, err := throttle.Failures(t.Context(), "k", at.Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("failures stored while the gate was held: %d, %v; want 0", n, err)
	}
	leave()
	for name, write := range writes {
		if err := write(t.Context()); err != nil {
			t.Errorf("%s with the gate free: %v", name, err)
		}
	}
	if n, _, err := throttle.Failures(t.Context(), "k", at.Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("failures stored: %d, %v; want 1", n, err)
	}
}
