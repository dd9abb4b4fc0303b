package contract

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// RefreshStore runs the contract of ports.RefreshStore. newStore must
// return an empty store of its own on every call; subtests run in
// parallel. The port has no getter, so the suite observes a token's state
// through what presenting it answers. A token is presented by its claims,
// as the verifier would give them: its jti, the family and user of the
// successor offered, and an expiry a day after authT0 unless said
// otherwise.
func RefreshStore(t *testing.T, newStore func(t *testing.T) ports.RefreshStore) {
	t.Helper()
	now := authT0.Add(time.Hour)

	t.Run("a fresh token rotates, and so does its successor", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		authRotate(t, s, "t2", authToken("t3", "f1", "u1"), now.Add(time.Minute), domain.RefreshRotate)
	})

	t.Run("rotating a used token is reuse and revokes the whole family", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authSave(t, s, authToken("other", "f2", "u1"))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		authRotate(t, s, "t1", authToken("t2b", "f1", "u1"), now, domain.RefreshReused)
		// The successor the legitimate client holds is revoked with its family.
		authRotate(t, s, "t2", authToken("t3", "f1", "u1"), now, domain.RefreshRefused)
		// The reused token now reads as revoked, and the attempt stored nothing.
		authRotate(t, s, "t1", authToken("t2c", "f1", "u1"), now, domain.RefreshRefused)
		authRotate(t, s, "t2b", authToken("t4", "f1", "u1"), now, domain.RefreshRefused)
		// Another family of the same user is untouched.
		authRotate(t, s, "other", authToken("other2", "f2", "u1"), now, domain.RefreshRotate)
	})

	t.Run("tokens that cannot rotate are unauthenticated", func(t *testing.T) {
		t.Parallel()
		revoked := now.Add(-time.Minute)
		for _, tc := range []struct {
			name   string
			stored domain.RefreshRecord
		}{
			{"a token of a family the store does not hold", authToken("someone-else", "f9", "u1")},
			{"a token that expired before now", authTokenExpiring("t1", now.Add(-time.Microsecond))},
			{"a token expiring exactly now", authTokenExpiring("t1", now)},
			{"a token saved revoked", func() domain.RefreshRecord {
				r := authToken("t1", "f1", "u1")
				r.RevokedAt = &revoked
				return r
			}()},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := newStore(t)
				authSave(t, s, tc.stored)
				authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRefused)
				// Nothing was stored: the successor offered is no live token, and
				// presenting it detects no reuse either.
				authRotate(t, s, "t2", authToken("t3", "f1", "u1"), now, domain.RefreshRefused)
			})
		}
	})

	t.Run("a token of the family presented with another user is unauthenticated", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotate(t, s, "t1", authToken("t2", "f1", "u2"), now, domain.RefreshRefused)
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
	})

	t.Run("a token expiring one microsecond after now still rotates", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authTokenExpiring("t1", now.Add(time.Microsecond)))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
	})

	t.Run("a used token that has since expired is unauthenticated, not reuse", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authTokenExpiring("t1", now.Add(time.Minute)))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		t1 := authPresented("t1", "f1", "u1")
		t1.ExpiresAt = now.Add(time.Minute)
		authRotateClaims(t, s, t1, authToken("t3", "f1", "u1"), now.Add(time.Hour), domain.RefreshRefused)
		authRotate(t, s, "t2", authToken("t4", "f1", "u1"), now.Add(time.Hour), domain.RefreshRotate)
	})

	t.Run("a token older than the used tokens the family remembers is reuse", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		for i := 1; i <= domain.RefreshKept+1; i++ {
			authRotate(t, s, fmt.Sprint("t", i), authToken(fmt.Sprint("t", i+1), "f1", "u1"), now, domain.RefreshRotate)
		}
		authRotate(t, s, "t1", authToken("x", "f1", "u1"), now.Add(time.Minute), domain.RefreshReused)
		authRotate(t, s, fmt.Sprint("t", domain.RefreshKept+2), authToken("y", "f1", "u1"), now.Add(time.Minute), domain.RefreshRefused)
	})

	t.Run("within grace, a token the family replaced more rotations ago than it remembers is reuse", func(t *testing.T) {
		t.Parallel()
		// The one limit of the grace: a family remembers the first use of
		// its last domain.RefreshKept replaced tokens only.
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		for i := 1; i <= domain.RefreshKept+1; i++ {
			authRotateGrace(t, s, fmt.Sprint("t", i), authToken(fmt.Sprint("t", i+1), "f1", "u1"), now.Add(time.Duration(i)*time.Second), time.Minute, fmt.Sprint("t", i+1))
		}
		live := fmt.Sprint("t", domain.RefreshKept+2)
		authRotateGrace(t, s, "t2", authToken("x", "f1", "u1"), now.Add(5*time.Second), time.Minute, live)
		authPresent(t, s, authPresented("t1", "f1", "u1"), authToken("y", "f1", "u1"), now.Add(5*time.Second), time.Minute, domain.RefreshReused)
		authRotate(t, s, live, authToken("z", "f1", "u1"), now.Add(5*time.Second), domain.RefreshRefused)
	})

	t.Run("a reuse within the grace window returns the first successor, stores nothing, and after it revokes", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotateGrace(t, s, "t1", authToken("t2", "f1", "u1"), now, time.Minute, "t2")
		retry := now.Add(30 * time.Second)
		authRotateGrace(t, s, "t1", authToken("t2b", "f1", "u1"), retry, time.Minute, "t2")
		// t2b was not stored: the family keeps t2 alone.
		authRotate(t, s, "t2", authToken("t3", "f1", "u1"), retry, domain.RefreshRotate)
		late := now.Add(time.Minute + time.Second)
		authPresent(t, s, authPresented("t1", "f1", "u1"), authToken("t2c", "f1", "u1"), late, time.Minute, domain.RefreshReused)
		authRotate(t, s, "t3", authToken("t4", "f1", "u1"), late, domain.RefreshRefused)
	})

	t.Run("a successor offered within grace and not stored cannot rotate", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotateGrace(t, s, "t1", authToken("t2", "f1", "u1"), now, time.Minute, "t2")
		authRotateGrace(t, s, "t1", authToken("t2b", "f1", "u1"), now.Add(time.Second), time.Minute, "t2")
		// No client ever held t2b: presenting it is presenting a token the
		// family does not hold, reuse.
		authRotate(t, s, "t2b", authToken("t3b", "f1", "u1"), now.Add(2*time.Second), domain.RefreshReused)
		authRotate(t, s, "t2", authToken("t3", "f1", "u1"), now.Add(2*time.Second), domain.RefreshRefused)
	})

	t.Run("the grace window counts from the first use, not from the retries", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotateGrace(t, s, "t1", authToken("t2", "f1", "u1"), now, 10*time.Second, "t2")
		authRotateGrace(t, s, "t1", authToken("x1", "f1", "u1"), now.Add(9*time.Second), 10*time.Second, "t2")
		authPresent(t, s, authPresented("t1", "f1", "u1"), authToken("x2", "f1", "u1"), now.Add(10*time.Second), 10*time.Second, domain.RefreshReused)
	})

	t.Run("within grace after the successor rotated too, the family's newest live token is returned", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotateGrace(t, s, "t1", authToken("t2", "f1", "u1"), now, time.Minute, "t2")
		authRotateGrace(t, s, "t2", authToken("t3", "f1", "u1"), now.Add(time.Second), time.Minute, "t3")
		authRotateGrace(t, s, "t1", authToken("t9", "f1", "u1"), now.Add(2*time.Second), time.Minute, "t3")
		authRotateGrace(t, s, "t2", authToken("t9", "f1", "u1"), now.Add(2*time.Second), time.Minute, "t3")
		authRotate(t, s, "t3", authToken("t4", "f1", "u1"), now.Add(3*time.Second), domain.RefreshRotate)
	})

	t.Run("grace forgives nothing in a revoked family", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotateGrace(t, s, "t1", authToken("t2", "f1", "u1"), now, time.Minute, "t2")
		if err := s.RevokeFamily(t.Context(), "f1", now); err != nil {
			t.Fatalf("RevokeFamily: %v", err)
		}
		authPresent(t, s, authPresented("t1", "f1", "u1"), authToken("t2b", "f1", "u1"), now.Add(time.Second), time.Minute, domain.RefreshRefused)
	})

	t.Run("within grace, a family whose live token expired answers unauthenticated", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotateGrace(t, s, "t1", authTokenExpiring("t2", now.Add(time.Second)), now, time.Minute, "t2")
		authPresent(t, s, authPresented("t1", "f1", "u1"), authToken("t2b", "f1", "u1"), now.Add(2*time.Second), time.Minute, domain.RefreshRefused)
	})

	t.Run("a revoked family's tokens, successors included, are unauthenticated", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authSave(t, s, authToken("other", "f2", "u1"))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		if err := s.RevokeFamily(t.Context(), "f1", now); err != nil {
			t.Fatalf("RevokeFamily: %v", err)
		}
		authRotate(t, s, "t2", authToken("t3", "f1", "u1"), now, domain.RefreshRefused)
		authRotate(t, s, "t1", authToken("t3", "f1", "u1"), now, domain.RefreshRefused)
		authRotate(t, s, "other", authToken("other2", "f2", "u1"), now, domain.RefreshRotate)
		if err := s.RevokeFamily(t.Context(), "no-such-family", now); err != nil {
			t.Errorf("RevokeFamily(unknown) = %v, want nil", err)
		}
	})

	t.Run("revoking a user revokes all its families and no one else's", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("a1", "fa", "u1"))
		authSave(t, s, authToken("b1", "fb", "u1"))
		authSave(t, s, authToken("c1", "fc", "u2"))
		authRotate(t, s, "a1", authToken("a2", "fa", "u1"), now, domain.RefreshRotate)
		if err := s.RevokeUser(t.Context(), "u1", now); err != nil {
			t.Fatalf("RevokeUser: %v", err)
		}
		authRotate(t, s, "a2", authToken("a3", "fa", "u1"), now, domain.RefreshRefused)
		authRotate(t, s, "b1", authToken("b2", "fb", "u1"), now, domain.RefreshRefused)
		authRotate(t, s, "c1", authToken("c2", "fc", "u2"), now, domain.RefreshRotate)
	})

	t.Run("a successor outside the presented token's family or user, or with its id, is refused and changes nothing", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		for _, next := range []domain.RefreshRecord{authToken("t2", "f2", "u1"), authToken("t2", "f1", "u2"), authToken("t1", "f1", "u1")} {
			if _, err := s.RotateRefresh(t.Context(), authPresented("t1", "f1", "u1"), next, now, 0); err == nil || domain.KindOf(err) == domain.KindUnauthenticated {
				t.Errorf("RotateRefresh into %s of family %s and user %s = %v, want an internal error", next.ID, next.FamilyID, next.UserID, err)
			}
		}
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
	})

	t.Run("a successor id the family holds fails the rotation and leaves the presented token usable", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		if _, err := s.RotateRefresh(t.Context(), authPresented("t2", "f1", "u1"), authToken("t1", "f1", "u1"), now, 0); err == nil || domain.KindOf(err) == domain.KindUnauthenticated {
			t.Errorf("RotateRefresh into a used id of the family = %v, want an internal error", err)
		}
		authRotate(t, s, "t2", authToken("t3", "f1", "u1"), now, domain.RefreshRotate)
	})

	t.Run("claims read unchecked rotate only the live token, by its digest, and change nothing else", func(t *testing.T) {
		t.Parallel()
		// Claims whose Digest is set were read without their signature
		// checked (ports.RefreshTokenReader): the store may rotate the live
		// token by its exact string's digest, and must otherwise answer
		// Unproven and change nothing (no reuse, no grace).
		s := newStore(t)
		authSave(t, s, authDigested("t1", "f1", "u1"))
		authRotateClaims(t, s, authUnchecked("t1", "f1", "u1", "t1"), authDigested("t2", "f1", "u1"), now, domain.RefreshRotate)
		// The successor's digest was stored with it.
		authRotateClaims(t, s, authUnchecked("t2", "f1", "u1", "t2"), authDigested("t3", "f1", "u1"), now.Add(time.Second), domain.RefreshRotate)
		for _, tc := range []struct {
			name  string
			token domain.Claims
			grace time.Duration
		}{
			{"the live token's claims with another string's digest", authUnchecked("t3", "f1", "u1", "forged"), 0},
			{"a used token's claims, with its own digest (never reuse)", authUnchecked("t1", "f1", "u1", "t1"), 0},
			{"a used token's claims with the live token's digest", authUnchecked("t2", "f1", "u1", "t3"), 0},
			{"a just-used token's claims within grace (never reissued)", authUnchecked("t2", "f1", "u1", "t2"), time.Minute},
			{"a token older than the family remembers", authUnchecked("t0", "f1", "u1", "t0"), 0},
			{"the live token's claims and digest with another user", authUnchecked("t3", "f1", "u2", "t3"), 0},
		} {
			next := authDigested("x", "f1", tc.token.Subject)
			if rot, err := s.RotateRefresh(t.Context(), tc.token, next, now.Add(2*time.Second), tc.grace); err != nil || rot.Outcome != domain.RefreshUnproven {
				t.Errorf("%s: RotateRefresh = %s, %v; want Unproven", tc.name, authName(rot.Outcome), err)
			}
		}
		// Nothing was revoked, forgiven or stored: the live token rotates.
		authRotate(t, s, "t3", authDigested("t4", "f1", "u1"), now.Add(3*time.Second), domain.RefreshRotate)
	})

	t.Run("claims read unchecked of a family stored without a digest, or revoked, are unproven", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotateClaims(t, s, authUnchecked("t1", "f1", "u1", "t1"), authDigested("t2", "f1", "u1"), now, domain.RefreshUnproven)
		// The verified claims rotate it, and store the successor's digest.
		authRotate(t, s, "t1", authDigested("t2", "f1", "u1"), now, domain.RefreshRotate)
		if err := s.RevokeFamily(t.Context(), "f1", now); err != nil {
			t.Fatalf("RevokeFamily: %v", err)
		}
		authRotateClaims(t, s, authUnchecked("t2", "f1", "u1", "t2"), authDigested("t3", "f1", "u1"), now, domain.RefreshUnproven)
		authRotate(t, s, "t2", authDigested("t3", "f1", "u1"), now, domain.RefreshRefused)
	})

	t.Run("starting a family twice fails", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		if err := s.SaveRefresh(t.Context(), authToken("t9", "f1", "u2")); err == nil {
			t.Error("SaveRefresh into a stored family = nil, want an error")
		}
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
	})

	t.Run("of twenty concurrent rotations of one token exactly one succeeds", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		const n = 20
		got := make([]ports.Rotation, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				got[i], errs[i] = s.RotateRefresh(t.Context(), authPresented("t1", "f1", "u1"), authToken(fmt.Sprintf("next%d", i), "f1", "u1"), now, 0)
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch v := got[i].Outcome; {
			case err != nil:
				t.Errorf("rotation %d = %v, want no error", i, err)
			case v == domain.RefreshRotate && winner >= 0:
				t.Errorf("rotations %d and %d both succeeded", winner, i)
			case v == domain.RefreshRotate:
				winner = i
			case v != domain.RefreshReused && v != domain.RefreshRefused:
				t.Errorf("rotation %d = %s, want Reused or Refused", i, authName(v))
			}
		}
		if winner < 0 {
			t.Fatal("no rotation succeeded")
		}
		// The losers presented a used token: the family, the winner's successor included, is revoked.
		authRotate(t, s, fmt.Sprintf("next%d", winner), authToken("after", "f1", "u1"), now, domain.RefreshRefused)
	})

	t.Run("of twenty concurrent rotations of one token within grace, all get the one successor stored", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		const n = 20
		got := make([]ports.Rotation, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				got[i], errs[i] = s.RotateRefresh(t.Context(), authPresented("t1", "f1", "u1"), authToken(fmt.Sprintf("next%d", i), "f1", "u1"), now, 10*time.Second)
			})
		}
		wg.Wait()
		live := ""
		for i := range n {
			switch v := got[i].Outcome; {
			case errs[i] != nil || (v != domain.RefreshRotate && v != domain.RefreshReissue):
				t.Errorf("rotation %d within grace = %s, %v; want Rotate or Reissue", i, authName(v), errs[i])
			case live == "":
				live = got[i].Record.ID
			case got[i].Record.ID != live:
				t.Errorf("rotation %d returned %s, another %s: two live branches", i, got[i].Record.ID, live)
			}
		}
		if live == "" {
			t.Fatal("no rotation succeeded")
		}
		// Exactly one token of the family works: the one every answer named.
		authRotate(t, s, live, authToken("after", "f1", "u1"), now, domain.RefreshRotate)
		for i := range n {
			id := fmt.Sprintf("next%d", i)
			if rot, err := s.RotateRefresh(t.Context(), authPresented(id, "f1", "u1"), authToken("after-"+id, "f1", "u1"), now, 0); err == nil && rot.Outcome == domain.RefreshRotate {
				t.Errorf("%s rotated: a second live branch", id)
			}
		}
	})

	t.Run("purging removes only expired tokens, at most limit at a time", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for i := range 5 {
			r := authTokenExpiring(fmt.Sprintf("old%d", i), now.Add(-time.Duration(i+1)*time.Minute))
			r.FamilyID = fmt.Sprintf("fold%d", i)
			authSave(t, s, r)
		}
		atNow := authTokenExpiring("at-now", now)
		atNow.FamilyID = "fnow"
		authSave(t, s, atNow)
		authSave(t, s, authTokenExpiring("live", now.Add(time.Minute)))
		for _, tc := range []struct {
			limit, want int
		}{{0, 0}, {3, 3}, {3, 2}, {3, 0}} {
			n, err := s.PurgeRefresh(t.Context(), now, tc.limit)
			if err != nil || n != tc.want {
				t.Errorf("PurgeRefresh(limit %d) = %d, %v; want %d", tc.limit, n, err, tc.want)
			}
		}
		authRotate(t, s, "live", authToken("live2", "f1", "u1"), now, domain.RefreshRotate)
		// Purged families are free again: starting one works.
		authSave(t, s, authToken("old0", "fold0", "u9"))
		if n, err := s.PurgeRefresh(t.Context(), now.Add(time.Microsecond), 10); err != nil || n != 1 {
			t.Errorf("PurgeRefresh just after at-now expired = %d, %v; want 1", n, err)
		}
	})
}

// authToken returns a refresh record issued at authT0, valid for a day.
func authToken(id, family, user string) domain.RefreshRecord {
	return domain.RefreshRecord{ID: id, FamilyID: family, UserID: user,
		IssuedAt: authT0, ExpiresAt: authT0.Add(24 * time.Hour)}
}

// authDigested is authToken with the digest of the string "<id>-token",
// the token string the tests pretend was issued for it.
func authDigested(id, family, user string) domain.RefreshRecord {
	r := authToken(id, family, user)
	r.Digest = domain.TokenDigest(id + "-token")
	return r
}

// authUnchecked is authPresented read without its signature checked from
// the token string authDigested pretends was issued for the id stringOf.
func authUnchecked(id, family, user, stringOf string) domain.Claims {
	c := authPresented(id, family, user)
	c.Digest = domain.TokenDigest(stringOf + "-token")
	return c
}

// authTokenExpiring returns a token of family f1 and user u1 expiring at exp.
func authTokenExpiring(id string, exp time.Time) domain.RefreshRecord {
	r := authToken(id, "f1", "u1")
	r.ExpiresAt = exp
	return r
}

// authSave stores r or fails t.
func authSave(t *testing.T, s ports.RefreshStore, r domain.RefreshRecord) {
	t.Helper()
	if err := s.SaveRefresh(t.Context(), r); err != nil {
		t.Fatalf("SaveRefresh(%s): %v", r.ID, err)
	}
}

// authPresented returns the claims of a refresh token presented: id of
// family and user, issued at authT0, valid for a day.
func authPresented(id, family, user string) domain.Claims {
	return domain.Claims{Kind: domain.RefreshToken, ID: id, FamilyID: family, Subject: user,
		IssuedAt: authT0, ExpiresAt: authT0.Add(24 * time.Hour)}
}

// authRotate presents oldID (of next's family and user) for next without
// grace and fails t unless the outcome is want (with next as the record
// when it rotated).
func authRotate(t *testing.T, s ports.RefreshStore, oldID string, next domain.RefreshRecord, now time.Time, want domain.RefreshVerdict) {
	t.Helper()
	authRotateClaims(t, s, authPresented(oldID, next.FamilyID, next.UserID), next, now, want)
}

// authRotateClaims is authRotate presenting the token of claims p.
func authRotateClaims(t *testing.T, s ports.RefreshStore, p domain.Claims, next domain.RefreshRecord, now time.Time, want domain.RefreshVerdict) {
	t.Helper()
	got := authPresent(t, s, p, next, now, 0, want).Record
	if want == domain.RefreshRotate && (got.ID != next.ID || got.FamilyID != next.FamilyID || got.UserID != next.UserID ||
		!got.ExpiresAt.Equal(next.ExpiresAt) || !got.IssuedAt.Equal(next.IssuedAt)) {
		t.Errorf("RotateRefresh(%s → %s) returned %+v, want the successor", p.ID, next.ID, got)
	}
}

// authPresent presents the token of claims p for next with grace and
// fails t unless the outcome is want, answered without an error.
func authPresent(t *testing.T, s ports.RefreshStore, p domain.Claims, next domain.RefreshRecord, now time.Time, grace time.Duration,
	want domain.RefreshVerdict) ports.Rotation {
	t.Helper()
	rot, err := s.RotateRefresh(t.Context(), p, next, now, grace)
	if err != nil || rot.Outcome != want {
		t.Errorf("RotateRefresh(%s → %s) = %s, %v; want %s", p.ID, next.ID, authName(rot.Outcome), err, authName(want))
	}
	return rot
}

// authRotateGrace rotates oldID into next with grace and fails t unless it
// succeeds returning the live token wantLive (next.ID when oldID was
// unused), with the family, user and times that token was stored with.
func authRotateGrace(t *testing.T, s ports.RefreshStore, oldID string, next domain.RefreshRecord, now time.Time, grace time.Duration, wantLive string) {
	t.Helper()
	rot, err := s.RotateRefresh(t.Context(), authPresented(oldID, next.FamilyID, next.UserID), next, now, grace)
	got := rot.Record
	switch {
	case err != nil || (rot.Outcome != domain.RefreshRotate && rot.Outcome != domain.RefreshReissue):
		t.Fatalf("RotateRefresh(%s → %s) within grace = %s, %v; want Rotate or Reissue", oldID, next.ID, authName(rot.Outcome), err)
	case (rot.Outcome == domain.RefreshRotate) != (wantLive == next.ID):
		t.Fatalf("RotateRefresh(%s → %s) within grace = %s, want the successor %s stored only when rotated", oldID, next.ID, authName(rot.Outcome), wantLive)
	case got.ID != wantLive || got.FamilyID != next.FamilyID || got.UserID != next.UserID:
		t.Fatalf("RotateRefresh(%s → %s) within grace returned %s (family %s, user %s), want %s", oldID, next.ID, got.ID, got.FamilyID, got.UserID, wantLive)
	case !got.IssuedAt.Equal(authT0) || got.ExpiresAt.IsZero() || got.UsedAt != nil || got.RevokedAt != nil:
		t.Fatalf("RotateRefresh(%s → %s) within grace returned %+v, want the stored, live record", oldID, next.ID, got)
	}
}

// authName names an outcome of RotateRefresh.
func authName(v domain.RefreshVerdict) string {
	if int(v) < 5 {
		return [...]string{"Refused", "Rotate", "Reissue", "Reused", "Unproven"}[v]
	}
	return fmt.Sprint("verdict ", int(v))
}

// authIs reports whether the first domain error in err's chain is the
// sentinel target itself (errors.Is matches by code).
func authIs(err, target error) bool {
	var e *domain.Error
	return errors.As(err, &e) && error(e) == target
}
