package bunstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// TestRotationGroup holds SQLite's write gate while 30 rotations queue,
// so the one that gets the gate next commits them in one group. One of
// them fails (its successor's id is taken): the group rolls back and every
// rotation runs alone, so the 29 others succeed and the failed one leaves
// its token unused.
func TestRotationGroup(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "group.db"))
	if err := Migrate(t.Context(), db, nil); err != nil {
		t.Fatal(err)
	}
	s := NewRefreshStore(db)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(id string) domain.RefreshRecord {
		return domain.RefreshRecord{ID: id, FamilyID: "f-" + id, UserID: "u1", IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	const n, bad = 30, 7
	for i := range n {
		if err := s.SaveRefresh(t.Context(), rec(fmt.Sprintf("t%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveRefresh(t.Context(), rec("taken")); err != nil {
		t.Fatal(err)
	}
	leave, err := enterWriter(t.Context(), writeGate(db))
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			next := rec(fmt.Sprintf("t%d-next", i))
			next.FamilyID = fmt.Sprintf("f-t%d", i)
			if i == bad {
				next.ID = "taken"
			}
			_, errs[i] = s.RotateRefresh(t.Context(), fmt.Sprintf("t%d", i), next, now, 0)
		})
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.group.mu.Lock()
		queued := len(s.group.pending)
		s.group.mu.Unlock()
		if queued == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rotations queued, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
	leave()
	wg.Wait()
	for i, err := range errs {
		switch {
		case i == bad && err == nil:
			t.Errorf("rotation %d to a taken id succeeded", i)
		case i == bad && (errors.Is(err, domain.ErrRefreshTokenReused) || domain.KindOf(err) == domain.KindUnauthenticated):
			t.Errorf("rotation %d to a taken id = %v, want an internal error", i, err)
		case i != bad && err != nil:
			t.Errorf("rotation %d = %v, want success", i, err)
		}
	}
	// The failed rotation left t7 unused; the others used theirs.
	next := rec("t7-again")
	next.FamilyID = "f-t7"
	if _, err := s.RotateRefresh(t.Context(), "t7", next, now, 0); err != nil {
		t.Errorf("rotating the token of the failed rotation: %v", err)
	}
	next = rec("t3-again")
	next.FamilyID = "f-t3"
	if _, err := s.RotateRefresh(t.Context(), "t3", next, now, 0); !errors.Is(err, domain.ErrRefreshTokenReused) {
		t.Errorf("rotating a token its group used = %v, want ErrRefreshTokenReused", err)
	}
}
