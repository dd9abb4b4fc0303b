package contract

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SessionDirectory runs the contract of ports.SessionDirectory, the admin
// API's list of every user's live sessions (docs/admin.md, "Sessions"):
// live ones only, the last used first (then the greatest id), paged in
// the store with the true total. newStore must return an empty refresh
// store of its own on every call that implements it; subtests run in
// parallel.
func SessionDirectory(t *testing.T, newStore func(t *testing.T) ports.RefreshStore) {
	t.Helper()
	at := func(min int) time.Time { return authT0.Add(time.Duration(min) * time.Minute) }
	uid := func(n int) string { return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }
	open := func(t *testing.T) (ports.RefreshStore, ports.SessionDirectory) {
		t.Helper()
		s := newStore(t)
		dir, ok := s.(ports.SessionDirectory)
		if !ok {
			t.Fatalf("%T does not implement ports.SessionDirectory", s)
		}
		return s, dir
	}
	save := func(t *testing.T, s ports.RefreshStore, fam string, user, issued, expires int, addr, ua string) {
		t.Helper()
		if err := s.SaveRefresh(t.Context(), domain.RefreshRecord{ID: fam + "-t1", FamilyID: fam, UserID: uid(user),
			IssuedAt: at(issued), ExpiresAt: at(expires), Address: addr, UserAgent: ua}); err != nil {
			t.Fatalf("SaveRefresh: %v", err)
		}
	}
	list := func(t *testing.T, dir ports.SessionDirectory, limit, offset int) ([]string, int) {
		t.Helper()
		page, total, err := dir.AllSessions(t.Context(), at(10), limit, offset)
		if err != nil {
			t.Fatalf("AllSessions(%d, %d): %v", limit, offset, err)
		}
		out := make([]string, len(page))
		for i, x := range page {
			out[i] = x.ID
		}
		return out, total
	}

	t.Run("every user's live sessions, the last used first, with their fields", func(t *testing.T) {
		t.Parallel()
		s, dir := open(t)
		save(t, s, "f1", 1, 1, 600, "192.0.2.1", "phone")
		save(t, s, "f2", 2, 3, 600, "2001:db8::2", "laptop")
		save(t, s, "f3", 3, 2, 600, "192.0.2.3", "tablet")
		save(t, s, "f4", 1, 4, 5, "192.0.2.4", "expired") // expired at minute 5
		save(t, s, "f5", 2, 5, 600, "192.0.2.5", "gone")  // revoked below
		save(t, s, "f6", 3, 3, 600, "192.0.2.6", "tie")   // same time as f2: the greater id first
		if err := s.RevokeFamily(t.Context(), "f5", at(6)); err != nil {
			t.Fatal(err)
		}
		got, total := list(t, dir, 0, 0)
		if want := []string{"f6", "f2", "f3", "f1"}; !slices.Equal(got, want) || total != 4 {
			t.Fatalf("AllSessions = %v (total %d), want %v (total 4)", got, total, want)
		}
		page, _, err := dir.AllSessions(t.Context(), at(10), 1, 1)
		if err != nil || len(page) != 1 {
			t.Fatalf("AllSessions(1, 1) = %+v, %v", page, err)
		}
		if x := page[0]; x.ID != "f2" || x.UserID != uid(2) || x.Address != "2001:db8::2" || x.UserAgent != "laptop" ||
			!x.DateCreated.Equal(at(3)) || !x.LastUsed.Equal(at(3)) || !x.ExpiresAt.Equal(at(600)) || x.RevokedAt != nil {
			t.Errorf("the second session = %+v", x)
		}
	})

	t.Run("pages are cut in order with the true total; past the end is empty", func(t *testing.T) {
		t.Parallel()
		s, dir := open(t)
		for i := range 7 {
			save(t, s, fmt.Sprintf("g%d", i), i%3, i, 600, "192.0.2.1", "agent")
		}
		var all []string
		for off := 0; off < 7; off += 3 {
			got, total := list(t, dir, 3, off)
			if total != 7 {
				t.Fatalf("total at offset %d = %d, want 7", off, total)
			}
			all = append(all, got...)
		}
		if want := []string{"g6", "g5", "g4", "g3", "g2", "g1", "g0"}; !slices.Equal(all, want) {
			t.Errorf("pages of 3 = %v, want %v", all, want)
		}
		if got, total := list(t, dir, 0, 5); !slices.Equal(got, []string{"g1", "g0"}) || total != 7 {
			t.Errorf("offset 5 without a limit = %v (total %d)", got, total)
		}
		if got, total := list(t, dir, 3, 9); len(got) != 0 || total != 7 {
			t.Errorf("past the end = %v (total %d), want none of 7", got, total)
		}
	})

	t.Run("none is no error", func(t *testing.T) {
		t.Parallel()
		_, dir := open(t)
		if got, total := list(t, dir, 10, 0); len(got) != 0 || total != 0 {
			t.Errorf("an empty store lists %v (total %d)", got, total)
		}
	})
}
