package bunstore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
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
