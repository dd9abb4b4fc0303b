package bunstore

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestArchiveMovesRefreshFamilies exports the families of an SQLite
// database, loads them into PostgreSQL and back into a new SQLite file:
// every family arrives as it was (live token, generation, used tokens
// with their first use, revocation), expired ones stay behind, and the
// sessions behave as before the move.
func TestArchiveMovesRefreshFamilies(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	now := time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)
	open := func(dsn string) *RefreshStore {
		db := openTestDB(t, dsn)
		if err := Migrate(ctx, db, nil); err != nil {
			t.Fatal(err)
		}
		return NewRefreshStore(db)
	}
	src := open("sqlite:" + filepath.Join(t.TempDir(), "src.db"))
	rec := func(id, family string, at time.Time) domain.RefreshRecord {
		return domain.RefreshRecord{ID: id, FamilyID: family, UserID: "u1", IssuedAt: at, ExpiresAt: at.Add(time.Hour)}
	}
	claims := func(r domain.RefreshRecord) domain.Claims {
		return domain.Claims{Kind: domain.RefreshToken, ID: r.ID, FamilyID: r.FamilyID, Subject: r.UserID, ExpiresAt: r.ExpiresAt}
	}
	for _, f := range []string{"fa", "fb", "fc"} {
		if err := src.SaveRefresh(ctx, rec(f+"1", f, now.Add(-time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range []string{"fa2", "fa3", "fa4"} {
		prev := rec("fa"+string(rune('1'+i)), "fa", now.Add(-time.Minute))
		if _, err := src.RotateRefresh(ctx, claims(prev), rec(id, "fa", now.Add(-time.Minute)), now.Add(time.Duration(i-5)*time.Second), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.RevokeFamily(ctx, "fb", now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := src.SaveRefresh(ctx, rec("fx1", "fx", now.Add(-2*time.Hour))); err != nil { // expired an hour ago
		t.Fatal(err)
	}

	export := func(s *RefreshStore) []domain.RefreshFamily {
		t.Helper()
		var fs []domain.RefreshFamily
		if err := NewArchive(s.db).EachRefreshFamily(ctx, now, func(f domain.RefreshFamily) error {
			fs = append(fs, f)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	load := func(s *RefreshStore, fs []domain.RefreshFamily) {
		t.Helper()
		l, err := NewArchive(s.db).BeginLoad(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Rollback() }()
		if n, err := l.AddRefreshFamilies(ctx, fs); err != nil || n != len(fs) {
			t.Fatalf("AddRefreshFamilies = %d, %v; want %d", n, err, len(fs))
		}
		if err := l.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	exported := export(src)
	if len(exported) != 3 || exported[0].ID != "fa" || exported[0].CurrentID != "fa4" || exported[0].Generation != 3 ||
		len(exported[0].Used) != 2 || exported[0].Used[0].ID != "fa3" || exported[1].RevokedAt == nil {
		t.Fatalf("exported %+v; want fa (fa4 live, 3 rotations, fa3 and fa2 used), fb revoked, fc", exported)
	}
	pg := open(pgtest.New(t))
	load(pg, exported)
	back := open("sqlite:" + filepath.Join(t.TempDir(), "back.db"))
	load(back, export(pg))
	if again := export(back); !reflect.DeepEqual(again, exported) {
		t.Fatalf("after SQLite → PostgreSQL → SQLite:\n%+v\nwant\n%+v", again, exported)
	}
	// The sessions behave as before the move: fa3 was used 3 s before now.
	if live, err := back.RotateRefresh(ctx, claims(rec("fa3", "fa", now)), rec("x", "fa", now), now, 10*time.Second); err != nil ||
		live.Outcome != domain.RefreshReissue || live.Record.ID != "fa4" {
		t.Errorf("fa's token used 2 s ago, within grace = %v %s, %v; want fa4 again", live.Outcome, live.Record.ID, err)
	}
	if rot, err := back.RotateRefresh(ctx, claims(rec("fb1", "fb", now)), rec("y", "fb", now), now, 0); err != nil || rot.Outcome != domain.RefreshRefused {
		t.Errorf("fb's token = %v, %v; want refused", rot.Outcome, err)
	}
	if rot, err := back.RotateRefresh(ctx, claims(rec("fa1", "fa", now)), rec("z", "fa", now), now, 10*time.Second); err != nil || rot.Outcome != domain.RefreshReused {
		t.Errorf("fa's token used 5 s ago, replaced three rotations ago, with a 10 s grace = %v, %v; want reuse (a family remembers two)", rot.Outcome, err)
	}
}

// TestArchiveConvertsTheRefreshTokensOfFormat1 loads refresh tokens as
// archives of format version 1 carried them, on both engines: they become
// the families the schema migration would make, a family stored already
// wins with merge and fails without.
func TestArchiveConvertsTheRefreshTokensOfFormat1(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "v1.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.New(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := openTestDB(t, tc.dsn(t))
			if err := Migrate(ctx, db, nil); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			used := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
			tokens := []domain.RefreshRecord{
				{ID: "a1", FamilyID: "fa", UserID: "u1", IssuedAt: now.Add(-3 * time.Hour), ExpiresAt: now.Add(time.Hour), UsedAt: used(2 * time.Hour)},
				{ID: "a2", FamilyID: "fa", UserID: "u1", IssuedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(2 * time.Hour), UsedAt: used(time.Hour)},
				{ID: "a3", FamilyID: "fa", UserID: "u1", IssuedAt: now.Add(-time.Hour), ExpiresAt: now.Add(3 * time.Hour)},
				{ID: "b1", FamilyID: "fb", UserID: "u2", IssuedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour), RevokedAt: used(time.Minute)},
			}
			a := NewArchive(db)
			for _, merge := range []bool{false, true} {
				l, err := a.BeginLoad(ctx, merge)
				if err != nil {
					t.Fatal(err)
				}
				if n, err := l.AddRefreshTokens(ctx, tokens); err != nil || n != len(tokens) {
					t.Fatalf("AddRefreshTokens = %d, %v", n, err)
				}
				stored, skipped, err := l.ConvertRefreshTokens(ctx)
				switch {
				case !merge && (err != nil || stored != 2 || skipped != 0):
					t.Fatalf("ConvertRefreshTokens into an empty database = %d, %d, %v; want 2 stored", stored, skipped, err)
				case merge && (err != nil || stored != 0 || skipped != 2):
					t.Fatalf("ConvertRefreshTokens with merge, both families stored = %d, %d, %v; want 2 skipped", stored, skipped, err)
				}
				if err := l.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			l, err := a.BeginLoad(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.AddRefreshTokens(ctx, tokens[:1]); err != nil {
				t.Fatal(err)
			}
			if _, _, err := l.ConvertRefreshTokens(ctx); err == nil {
				t.Error("ConvertRefreshTokens of a family stored, without merge, succeeded")
			}
			_ = l.Rollback()

			var fs []domain.RefreshFamily
			if err := a.EachRefreshFamily(ctx, now, func(f domain.RefreshFamily) error { fs = append(fs, f); return nil }); err != nil {
				t.Fatal(err)
			}
			want := []domain.RefreshFamily{
				{ID: "fa", UserID: "u1", CurrentID: "a3", IssuedAt: now.Add(-time.Hour), ExpiresAt: now.Add(3 * time.Hour), Generation: 2,
					Used: []domain.UsedRefresh{{ID: "a2", UsedAt: now.Add(-time.Hour)}, {ID: "a1", UsedAt: now.Add(-2 * time.Hour)}}},
				{ID: "fb", UserID: "u2", CurrentID: "b1", IssuedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour), RevokedAt: used(time.Minute)},
			}
			if !reflect.DeepEqual(fs, want) {
				t.Fatalf("families\n%+v\nwant\n%+v", fs, want)
			}
		})
	}
}
