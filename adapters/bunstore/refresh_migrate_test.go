package bunstore

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestRefreshFamiliesMigrationKeepsSessions fills refresh_tokens as the
// cachegate before refresh families left it (one row per issued token),
// upgrades the schema, and presents the old tokens: every token that
// worked before works after, as it did (live tokens rotate, a reuse
// within the grace of its first use gets the live token again, older
// reuse revokes), revoked sessions stay revoked and listed, expired ones
// are refused and purged.
func TestRefreshFamiliesMigrationKeepsSessions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "upgrade.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.New(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := openTestDB(t, tc.dsn(t))
			if err := migrateBefore(ctx, db, nil, "20261127000100_auth_refresh_families"); err != nil {
				t.Fatalf("migrate to the schema of old: %v", err)
			}
			now := time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)
			ago := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
			exp := now.Add(29 * domain.Day)
			old := []domain.RefreshRecord{
				// fa: used twice long ago; a3 is live.
				{ID: "a1", FamilyID: "fa", UserID: "u1", IssuedAt: now.Add(-3 * time.Hour), ExpiresAt: exp, UsedAt: ago(2 * time.Hour)},
				{ID: "a2", FamilyID: "fa", UserID: "u1", IssuedAt: now.Add(-2 * time.Hour), ExpiresAt: exp, UsedAt: ago(time.Hour)},
				{ID: "a3", FamilyID: "fa", UserID: "u1", IssuedAt: now.Add(-time.Hour), ExpiresAt: exp},
				// fb: b2 used three seconds ago (within a grace of 10 s).
				{ID: "b1", FamilyID: "fb", UserID: "u1", IssuedAt: now.Add(-3 * time.Hour), ExpiresAt: exp, UsedAt: ago(2 * time.Hour)},
				{ID: "b2", FamilyID: "fb", UserID: "u1", IssuedAt: now.Add(-2 * time.Hour), ExpiresAt: exp, UsedAt: ago(3 * time.Second)},
				{ID: "b3", FamilyID: "fb", UserID: "u1", IssuedAt: now.Add(-3 * time.Second), ExpiresAt: exp},
				// fc: logged out a minute ago.
				{ID: "c1", FamilyID: "fc", UserID: "u2", IssuedAt: now.Add(-time.Hour), ExpiresAt: exp, RevokedAt: ago(time.Minute)},
				// fd: expired a second ago.
				{ID: "d1", FamilyID: "fd", UserID: "u2", IssuedAt: now.Add(-30 * domain.Day), ExpiresAt: now.Add(-time.Second)},
				// fe: three rotations; e1 is older than the two a family remembers.
				{ID: "e1", FamilyID: "fe", UserID: "u3", IssuedAt: now.Add(-4 * time.Hour), ExpiresAt: exp, UsedAt: ago(3 * time.Hour)},
				{ID: "e2", FamilyID: "fe", UserID: "u3", IssuedAt: now.Add(-3 * time.Hour), ExpiresAt: exp, UsedAt: ago(2 * time.Hour)},
				{ID: "e3", FamilyID: "fe", UserID: "u3", IssuedAt: now.Add(-2 * time.Hour), ExpiresAt: exp, UsedAt: ago(time.Hour)},
				{ID: "e4", FamilyID: "fe", UserID: "u3", IssuedAt: now.Add(-time.Hour), ExpiresAt: exp},
			}
			for _, r := range old {
				if _, err := db.sql.ExecContext(ctx, `INSERT INTO refresh_tokens
					(id, family_id, user_id, issued_at, expires_at, used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					r.ID, r.FamilyID, r.UserID, engine.TimeArg(r.IssuedAt), engine.TimeArg(r.ExpiresAt), engine.NullTimeArg(r.UsedAt), engine.NullTimeArg(r.RevokedAt)); err != nil {
					t.Fatalf("insert %s: %v", r.ID, err)
				}
			}
			for range 2 {
				if err := Migrate(ctx, db, nil); err != nil {
					t.Fatalf("upgrade: %v", err)
				}
			}
			if exists, err := tableExists(ctx, db.eng, db.sql, "refresh_tokens"); err != nil || exists {
				t.Fatalf("refresh_tokens after the upgrade: exists %v, %v", exists, err)
			}
			var rows int
			if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM refresh_families").Scan(&rows); err != nil || rows != 5 {
				t.Fatalf("refresh_families holds %d rows (%v), want one per family: 5", rows, err)
			}

			s := NewRefreshStore(db)
			claims := func(r domain.RefreshRecord) domain.Claims {
				return domain.Claims{Kind: domain.RefreshToken, ID: r.ID, FamilyID: r.FamilyID, Subject: r.UserID,
					IssuedAt: r.IssuedAt, ExpiresAt: r.ExpiresAt.Truncate(time.Second)}
			}
			next := func(id, family, user string) domain.RefreshRecord {
				return domain.RefreshRecord{ID: id, FamilyID: family, UserID: user, IssuedAt: now, ExpiresAt: now.Add(30 * domain.Day)}
			}
			const grace = 10 * time.Second
			want := func(what string, got ports.Rotation, err error, wantID string, outcome domain.RefreshVerdict) {
				t.Helper()
				if err != nil || got.Outcome != outcome || got.Record.ID != wantID {
					t.Errorf("%s = %v %s, %v; want %v %s", what, got.Outcome, got.Record.ID, err, outcome, wantID)
				}
			}
			byID := func(id string) domain.RefreshRecord {
				i := slices.IndexFunc(old, func(r domain.RefreshRecord) bool { return r.ID == id })
				return old[i]
			}

			got, err := s.RotateRefresh(ctx, claims(byID("a3")), next("a4", "fa", "u1"), now, grace)
			want("the live token of fa", got, err, "a4", domain.RefreshRotate)
			got, err = s.RotateRefresh(ctx, claims(byID("b2")), next("b9", "fb", "u1"), now, grace)
			want("fb's token used 3 s ago, within grace", got, err, "b3", domain.RefreshReissue)
			if got.Record.ExpiresAt != exp || !got.Record.IssuedAt.Equal(now.Add(-3*time.Second)) {
				t.Errorf("the live token given again: issued %v, expires %v; want its stored times", got.Record.IssuedAt, got.Record.ExpiresAt)
			}
			got, err = s.RotateRefresh(ctx, claims(byID("c1")), next("c2", "fc", "u2"), now, grace)
			want("a token of the revoked fc", got, err, "", domain.RefreshRefused)
			got, err = s.RotateRefresh(ctx, claims(byID("d1")), next("d2", "fd", "u2"), now, grace)
			want("the expired token of fd", got, err, "", domain.RefreshRefused)
			got, err = s.RotateRefresh(ctx, claims(byID("e1")), next("e9", "fe", "u3"), now, grace)
			want("fe's oldest token", got, err, "", domain.RefreshReused)
			got, err = s.RotateRefresh(ctx, claims(byID("e4")), next("e5", "fe", "u3"), now, grace)
			want("fe's live token after the reuse", got, err, "", domain.RefreshRefused)
			got, err = s.RotateRefresh(ctx, claims(byID("b1")), next("b8", "fb", "u1"), now, grace)
			want("fb's token used 2 h ago", got, err, "", domain.RefreshReused)

			revoked, err := s.RevokedFamilies(ctx, now.Add(-2*time.Minute))
			if err != nil || !slices.Equal(revoked, []string{"fb", "fc", "fe"}) {
				t.Errorf("RevokedFamilies = %q, %v; want fb, fc, fe", revoked, err)
			}
			if n, err := s.PurgeRefresh(ctx, now, 100); err != nil || n != 1 {
				t.Errorf("PurgeRefresh = %d, %v; want fd purged", n, err)
			}
		})
	}
}

// TestRefreshStorageStaysOnePerFamily rotates one family a thousand times
// (and reuses a token within grace on the way): the table holds one row
// for it, whose generation counts the rotations.
func TestRefreshStorageStaysOnePerFamily(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "flat.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.New(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := openTestDB(t, tc.dsn(t))
			if err := Migrate(ctx, db, nil); err != nil {
				t.Fatal(err)
			}
			s := NewRefreshStore(db)
			now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			rec := func(i int, family string) domain.RefreshRecord {
				return domain.RefreshRecord{ID: fmt.Sprintf("%s-%d", family, i), FamilyID: family,
					UserID: "u1", IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
			}
			claims := func(r domain.RefreshRecord) domain.Claims {
				return domain.Claims{Kind: domain.RefreshToken, ID: r.ID, FamilyID: r.FamilyID, Subject: r.UserID, ExpiresAt: r.ExpiresAt}
			}
			for _, f := range []string{"f1", "f2"} {
				if err := s.SaveRefresh(ctx, rec(0, f)); err != nil {
					t.Fatal(err)
				}
			}
			const n = 1000
			for i := range n {
				rot, err := s.RotateRefresh(ctx, claims(rec(i, "f1")), rec(i+1, "f1"), now, 10*time.Second)
				live := rot.Record
				if err != nil || rot.Outcome != domain.RefreshRotate || live.ID != rec(i+1, "f1").ID {
					t.Fatalf("rotation %d: %s, %v", i, live.ID, err)
				}
				if i%100 == 0 { // a client retrying: the live token again, nothing stored
					if again, err := s.RotateRefresh(ctx, claims(rec(i, "f1")), rec(n+i, "f1"), now, 10*time.Second); err != nil || again.Record.ID != live.ID {
						t.Fatalf("retry %d: %s, %v", i, again.Record.ID, err)
					}
				}
			}
			var rows int
			var generation int64
			if err := db.sql.QueryRowContext(ctx, "SELECT count(*), max(generation) FROM refresh_families").Scan(&rows, &generation); err != nil {
				t.Fatal(err)
			}
			if rows != 2 || generation != n {
				t.Fatalf("after %d rotations of one of two families: %d rows, generation %d; want 2 rows, generation %d", n, rows, generation, n)
			}
		})
	}
}
