package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
)

func TestWriteGate(t *testing.T) {
	t.Parallel()
	a := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	b := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "b.db"))
	if writeGate(a) == nil || writeGate(a) != writeGate(a) {
		t.Fatal("an SQLite database must have one gate")
	}
	if writeGate(a) == writeGate(b) {
		t.Fatal("two databases must not share a gate")
	}
	leave, err := enterWriter(t.Context(), writeGate(a))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := enterWriter(ctx, writeGate(a)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second writer while the gate is held: %v, want to wait until its context ends", err)
	}
	if other, err := enterWriter(t.Context(), writeGate(b)); err != nil {
		t.Fatalf("another database's writer must not wait: %v", err)
	} else {
		other()
	}
	leave()
	again, err := enterWriter(t.Context(), writeGate(a))
	if err != nil {
		t.Fatalf("after leaving, the next writer enters: %v", err)
	}
	again()
	if leave, err := enterWriter(t.Context(), nil); err != nil {
		t.Fatal(err)
	} else {
		leave()
	}
}

// The gate belongs to the handle Open made: a second handle on the same
// file has its own, and a handle made elsewhere has none (it waits in
// SQLite's busy handler, as any other process does).
func TestWriteGateBelongsToTheHandle(t *testing.T) {
	t.Parallel()
	path := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	first, second := openTestDB(t, path), openTestDB(t, path)
	if writeGate(first) == nil || writeGate(first) == writeGate(second) {
		t.Error("two handles from Open must each have a gate of their own")
	}
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "raw.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := bun.NewDB(raw, sqlitedialect.New())
	t.Cleanup(func() { _ = db.Close() })
	if writeGate(db) != nil {
		t.Error("a handle not made by Open has a gate")
	}
}
