package domain_test

import (
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

func TestRefreshFamilyRotatedKeepsTheLastReplacedTokens(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(id string, at time.Time) domain.RefreshRecord {
		return domain.RefreshRecord{ID: id, FamilyID: "f", UserID: "u", IssuedAt: at, ExpiresAt: at.Add(time.Hour)}
	}
	f := domain.NewRefreshFamily(rec("t1", t0))
	for i, id := range []string{"t2", "t3", "t4"} {
		f = f.Rotated(rec(id, t0.Add(time.Duration(i+1)*time.Second)), t0.Add(time.Duration(i+1)*time.Second))
	}
	want := []domain.UsedRefresh{{ID: "t3", UsedAt: t0.Add(3 * time.Second)}, {ID: "t2", UsedAt: t0.Add(2 * time.Second)}}
	if f.CurrentID != "t4" || f.Generation != 3 || len(f.Used) != domain.RefreshKept || f.Used[0] != want[0] || f.Used[1] != want[1] ||
		!f.ExpiresAt.Equal(t0.Add(3*time.Second+time.Hour)) {
		t.Fatalf("after three rotations: %+v; want t4 live, generation 3, used %+v", f, want)
	}
	if !f.Holds("t2") || !f.Holds("t4") || f.Holds("t1") {
		t.Errorf("Holds: t2 %v, t4 %v, t1 %v; want true, true, false", f.Holds("t2"), f.Holds("t4"), f.Holds("t1"))
	}
}

var (
	live  = domain.TokenDigest("the live token")
	other = domain.TokenDigest("a token forged with the live token's claims")
)

func withDigest(f domain.RefreshFamily) domain.RefreshFamily { f.CurrentDigest = live; return f }

func unchecked(c domain.Claims, d domain.Digest) domain.Claims { c.Digest = d; return c }

func TestRefreshFamilyJudge(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	revoked := now.Add(-time.Hour)
	family := func(edit func(*domain.RefreshFamily)) domain.RefreshFamily {
		f := domain.RefreshFamily{ID: "f", UserID: "u", CurrentID: "t3", IssuedAt: now.Add(-5 * time.Second),
			ExpiresAt: now.Add(time.Hour), Generation: 2,
			Used: []domain.UsedRefresh{{ID: "t2", UsedAt: now.Add(-5 * time.Second)}, {ID: "t1", UsedAt: now.Add(-time.Hour)}}}
		if edit != nil {
			edit(&f)
		}
		return f
	}
	token := func(id string) domain.Claims {
		return domain.Claims{Kind: domain.RefreshToken, ID: id, FamilyID: "f", Subject: "u", ExpiresAt: now.Add(time.Hour)}
	}
	for _, tc := range []struct {
		name   string
		family domain.RefreshFamily
		token  domain.Claims
		grace  time.Duration
		want   domain.RefreshVerdict
	}{
		{"the live token rotates", family(nil), token("t3"), 0, domain.RefreshRotate},
		{"the live token of a revoked family is refused", family(func(f *domain.RefreshFamily) { f.RevokedAt = &revoked }), token("t3"), 0, domain.RefreshRefused},
		{"the live token expiring now is refused", family(func(f *domain.RefreshFamily) { f.ExpiresAt = now }), token("t3"), 0, domain.RefreshRefused},
		{"a token of another user is refused", family(nil), func() domain.Claims { c := token("t3"); c.Subject = "v"; return c }(), 0, domain.RefreshRefused},
		{"a used token within grace reissues", family(nil), token("t2"), 10 * time.Second, domain.RefreshReissue},
		{"a used token at the end of grace is reuse", family(nil), token("t2"), 5 * time.Second, domain.RefreshReused},
		{"a used token without grace is reuse", family(nil), token("t2"), 0, domain.RefreshReused},
		{"a used token of a revoked family is refused", family(func(f *domain.RefreshFamily) { f.RevokedAt = &revoked }), token("t2"), 0, domain.RefreshRefused},
		{"a used token expired by its claims is refused", family(nil), func() domain.Claims { c := token("t1"); c.ExpiresAt = now; return c }(), 0, domain.RefreshRefused},
		{"the older used token used long ago is reuse", family(nil), token("t1"), 10 * time.Second, domain.RefreshReused},
		{"a token older than those remembered is reuse", family(nil), token("t0"), time.Hour, domain.RefreshReused},
		{"within grace without a live token is refused", family(func(f *domain.RefreshFamily) { f.CurrentID = "" }), token("t2"), 10 * time.Second, domain.RefreshRefused},

		// Claims read without their signature checked (Digest set).
		{"unchecked claims of the live token with its digest rotate", withDigest(family(nil)), unchecked(token("t3"), live), 0, domain.RefreshRotate},
		{"unchecked claims of the live token with another digest are unproven", withDigest(family(nil)), unchecked(token("t3"), other), 0, domain.RefreshUnproven},
		{"unchecked claims of a family without a digest are unproven", family(nil), unchecked(token("t3"), live), 0, domain.RefreshUnproven},
		{"unchecked claims of a used token within grace are unproven, not reissued", withDigest(family(nil)), unchecked(token("t2"), live), 10 * time.Second, domain.RefreshUnproven},
		{"unchecked claims of a used token are unproven, never reuse", withDigest(family(nil)), unchecked(token("t1"), live), 0, domain.RefreshUnproven},
		{"unchecked claims older than those remembered are unproven, never reuse", withDigest(family(nil)), unchecked(token("t0"), live), 0, domain.RefreshUnproven},
		{"unchecked claims without a live token are unproven", withDigest(family(func(f *domain.RefreshFamily) { f.CurrentID = "" })), unchecked(token(""), live), 0, domain.RefreshUnproven},
		{"unchecked claims proven by the digest of a revoked family are refused", withDigest(family(func(f *domain.RefreshFamily) { f.RevokedAt = &revoked })), unchecked(token("t3"), live), 0, domain.RefreshRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.family.Judge(tc.token, now, tc.grace); got != tc.want {
				t.Errorf("Judge = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestDigestMatchesOnlyTheSameDigest(t *testing.T) {
	t.Parallel()
	a, b := domain.TokenDigest("a"), domain.TokenDigest("b")
	var zero domain.Digest
	if !a.Matches(a) || a.Matches(b) || a.Matches(zero) || zero.Matches(zero) || !zero.IsZero() || a.IsZero() {
		t.Errorf("Matches: a~a %v, a~b %v, a~zero %v, zero~zero %v; want true, false, false, false",
			a.Matches(a), a.Matches(b), a.Matches(zero), zero.Matches(zero))
	}
}

func TestRotatedKeepsTheSuccessorsDigest(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	f := domain.NewRefreshFamily(domain.RefreshRecord{ID: "t1", Digest: live, FamilyID: "f", UserID: "u", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	if f.CurrentDigest != live || f.Current().Digest != live {
		t.Fatalf("a new family's digest %x, want the live token's", f.CurrentDigest)
	}
	f = f.Rotated(domain.RefreshRecord{ID: "t2", Digest: other, FamilyID: "f", UserID: "u", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)}, t0)
	if f.CurrentDigest != other {
		t.Errorf("after a rotation the digest is %x, want the successor's", f.CurrentDigest)
	}
}
