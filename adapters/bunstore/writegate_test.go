package bunstore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
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
	leave, err := writegate.Enter(t.Context(), a.gate)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := writegate.Enter(ctx, a.gate); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second writer while the gate is held: %v, want to wait until its context ends", err)
	}
	if other, err := writegate.Enter(t.Context(), b.gate); err != nil {
		t.Fatalf("another database's writer must not wait: %v", err)
	} else {
		other()
	}
	leave()
	again, err := writegate.Enter(t.Context(), a.gate)
	if err != nil {
		t.Fatalf("after leaving, the next writer enters: %v", err)
	}
	again()
	if leave, err := writegate.Enter(t.Context(), nil); err != nil {
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
