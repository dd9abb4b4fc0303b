package contract

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SessionBoundStore is a refresh store that shows sessions, evicts them
// and feeds revocations, as memstore's and bunstore's are.
type SessionBoundStore interface {
	ports.RefreshStore
	ports.SessionStore
	ports.SessionEvictor
	ports.RevocationFeed
}

// SessionEvictor runs the contract of ports.SessionEvictor, the bound on
// a user's live sessions (README, "Configuration":
// --max-sessions-per-user). newStore must return an empty store of its
// own on every call; subtests run in parallel.
func SessionEvictor(t *testing.T, newStore func(t *testing.T) SessionBoundStore) {
	t.Helper()
	now := authT0.Add(time.Hour)
	// login saves family fam of user u, last used min minutes after authT0.
	login := func(t *testing.T, s SessionBoundStore, fam, u string, min int) {
		t.Helper()
		r := authToken(fam+"-t1", fam, u)
		r.IssuedAt = authT0.Add(time.Duration(min) * time.Minute)
		authSave(t, s, r)
	}
	live := func(t *testing.T, s SessionBoundStore, u string) []string {
		t.Helper()
		l, err := s.UserSessions(t.Context(), u, now)
		if err != nil {
			t.Fatalf("UserSessions: %v", err)
		}
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = x.ID
		}
		return out
	}
	evict := func(t *testing.T, s SessionBoundStore, u string, keep int) []string {
		t.Helper()
		got, err := s.EvictSessions(t.Context(), u, keep, now)
		if err != nil {
			t.Fatalf("EvictSessions: %v", err)
		}
		slices.Sort(got)
		return got
	}

	t.Run("eviction keeps the last used, revokes the least recently used and returns them", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for i := 1; i <= 5; i++ {
			login(t, s, fmt.Sprintf("f%d", i), "u1", i)
		}
		login(t, s, "other", "u2", 0)
		expired := authTokenExpiring("x1", now)
		expired.FamilyID = "fx"
		authSave(t, s, expired)
		login(t, s, "fr", "u1", 0)
		if err := s.RevokeFamily(t.Context(), "fr", authT0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		// A refresh is a use: f1 becomes the last used.
		next := authToken("f1-t2", "f1", "u1")
		next.IssuedAt = authT0.Add(30 * time.Minute)
		authRotate(t, s, "f1-t1", next, authT0.Add(30*time.Minute), domain.RefreshRotate)
		if got, want := live(t, s, "u1"), []string{"f1", "f5", "f4", "f3", "f2"}; !slices.Equal(got, want) {
			t.Fatalf("sessions before = %v, want %v", got, want)
		}
		if got, want := evict(t, s, "u1", 3), []string{"f2", "f3"}; !slices.Equal(got, want) {
			t.Errorf("EvictSessions(keep 3) = %v, want %v", got, want)
		}
		if got, want := live(t, s, "u1"), []string{"f1", "f5", "f4"}; !slices.Equal(got, want) {
			t.Errorf("sessions after = %v, want %v", got, want)
		}
		// The evicted families' tokens are refused, and the feed lists them.
		authRotate(t, s, "f2-t1", authToken("f2-t2", "f2", "u1"), now, domain.RefreshRefused)
		revoked, err := s.RevokedFamilies(t.Context(), now)
		if err != nil || !slices.Equal(revoked, []string{"f2", "f3"}) {
			t.Errorf("RevokedFamilies = %v, %v; want [f2 f3]", revoked, err)
		}
		if got := evict(t, s, "u1", 3); len(got) != 0 {
			t.Errorf("a second eviction = %v, want none", got)
		}
		if got := live(t, s, "u2"); !slices.Equal(got, []string{"other"}) {
			t.Errorf("another user's sessions = %v", got)
		}
		authRotate(t, s, "f4-t1", authToken("f4-t2", "f4", "u1"), now, domain.RefreshRotate)
	})

	t.Run("of sessions last used at the same time, the greatest id is kept and listed first", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for _, f := range []string{"fb", "fc", "fa"} {
			login(t, s, f, "u1", 1)
		}
		if got, want := live(t, s, "u1"), []string{"fc", "fb", "fa"}; !slices.Equal(got, want) {
			t.Fatalf("sessions = %v, want %v", got, want)
		}
		if got, want := evict(t, s, "u1", 1), []string{"fa", "fb"}; !slices.Equal(got, want) {
			t.Errorf("EvictSessions(keep 1) = %v, want %v", got, want)
		}
	})

	t.Run("under the bound nothing is evicted", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		login(t, s, "f1", "u1", 1)
		login(t, s, "f2", "u1", 2)
		if got := evict(t, s, "u1", 2); len(got) != 0 {
			t.Errorf("EvictSessions(keep 2) of 2 = %v, want none", got)
		}
		if got := evict(t, s, "nobody", 1); len(got) != 0 {
			t.Errorf("EvictSessions of a user without sessions = %v", got)
		}
	})

	t.Run("twenty concurrent logins at the bound leave the bound, each eviction reported once", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		const keep, n = 5, 20
		var all []string
		for i := range keep {
			f := fmt.Sprintf("f0%02d", i)
			login(t, s, f, "u1", i)
			all = append(all, f)
		}
		evicted := make([][]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			f := fmt.Sprintf("f1%02d", i)
			all = append(all, f)
			wg.Go(func() {
				r := authToken(f+"-t1", f, "u1")
				r.IssuedAt = authT0.Add(time.Duration(10+i) * time.Minute)
				if errs[i] = s.SaveRefresh(t.Context(), r); errs[i] == nil {
					evicted[i], errs[i] = s.EvictSessions(t.Context(), "u1", keep, now)
				}
			})
		}
		wg.Wait()
		var gone []string
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("login %d: %v", i, errs[i])
			}
			gone = append(gone, evicted[i]...)
		}
		slices.Sort(gone)
		// The last used five of all twenty-five stay; every other one
		// was evicted, by exactly one of the logins.
		kept := []string{"f119", "f118", "f117", "f116", "f115"}
		if got := live(t, s, "u1"); !slices.Equal(got, kept) {
			t.Errorf("sessions after = %v, want %v", got, kept)
		}
		want := slices.DeleteFunc(slices.Clone(all), func(f string) bool { return slices.Contains(kept, f) })
		slices.Sort(want)
		if !slices.Equal(gone, want) {
			t.Errorf("evicted = %v, want each of %v once", gone, want)
		}
	})
}
