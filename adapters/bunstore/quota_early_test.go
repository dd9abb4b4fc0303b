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

// Once an assignee's create has been refused by its quota, its next
// create that cannot fit is refused on a pool connection, without waiting
// for SQLite's writer: here the write gate is held by another writer the
// whole time, and the refusal still comes (without the early check the
// create would wait at the gate until its context ended).
func TestARefusedAssigneesNextCreateIsRefusedWithoutTheWriter(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "early.db"))
	repo := migrateTable(t, db, "user_cache")
	q := domain.Quota{MaxEntries: 3}
	refused := false
	i := 0
	for ; i < 20 && !refused; i++ {
		// Entries i*100 share one assignee (testEntry).
		err := repo.Create(t.Context(), testEntry(i*100), testNow, q)
		switch {
		case errors.Is(err, domain.ErrCacheQuotaExceeded):
			refused = true
		case err != nil:
			t.Fatal(err)
		}
	}
	if !refused {
		t.Fatal("the quota of 3 entries never refused a create")
	}
	leave, err := writegate.Enter(t.Context(), db.gate, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := repo.Create(ctx, testEntry(i*100), testNow, q); !errors.Is(err, domain.ErrCacheQuotaExceeded) {
		t.Fatalf("a create past the quota while another writer holds the gate = %v, want the quota's refusal without waiting", err)
	}
	// Another assignee's create, never refused, waits for the writer as
	// before.
	short, cancelShort := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancelShort()
	if err := repo.Create(short, testEntry(1), testNow, q); err == nil || errors.Is(err, domain.ErrCacheQuotaExceeded) {
		t.Fatalf("another assignee's create while the gate is held = %v, want it to wait for the writer", err)
	}
}
