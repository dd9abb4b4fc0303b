package bunstore

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestSignsFromMigrationKeepsTheSigningKey stores keys in the schema
// before signing_keys.signs_from, upgrades it, and reads them back: each
// signs from its creation, so the key that signed before still signs.
func TestSignsFromMigrationKeepsTheSigningKey(t *testing.T) {
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
			if err := migrateBefore(ctx, db, nil, "20261127002500_signing_keys_signs_from"); err != nil {
				t.Fatalf("migrate to the schema of old: %v", err)
			}
			t1 := time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)
			t2 := t1.Add(time.Hour)
			for _, k := range []struct {
				id      string
				created time.Time
				retired *time.Time
			}{{"old", t1, &t2}, {"cur", t2, nil}} {
				if _, err := db.sql.ExecContext(ctx, `INSERT INTO signing_keys
					(id, algorithm, "private", "public", date_created, retired_at) VALUES (?, 'EdDSA', ?, ?, ?, ?)`,
					k.id, []byte("seed"), []byte("public"), engine.TimeArg(k.created), engine.NullTimeArg(k.retired)); err != nil {
					t.Fatal(err)
				}
			}
			if err := Migrate(ctx, db, nil); err != nil {
				t.Fatalf("upgrade: %v", err)
			}
			keys, err := NewKeyStore(db).SigningKeys(ctx)
			if err != nil || len(keys) != 2 {
				t.Fatalf("SigningKeys = %d keys, %v", len(keys), err)
			}
			for _, k := range keys {
				if !k.SignsFrom.Equal(k.DateCreated) {
					t.Errorf("key %s signs from %v, want its creation %v", k.ID, k.SignsFrom, k.DateCreated)
				}
			}
			if s := keys[0].StateAt(t2.Add(time.Minute)); keys[0].ID != "cur" || s != domain.KeySigning {
				t.Errorf("after the upgrade key %s is %s, want cur signing", keys[0].ID, s)
			}
		})
	}
}
