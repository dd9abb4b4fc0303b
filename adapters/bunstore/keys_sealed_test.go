package bunstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/domain"
)

// storedKeyRow is a row of signing_keys as the database holds it.
type storedKeyRow struct {
	ID      string `bun:"id"`
	Private []byte `bun:"private"`
	Public  []byte `bun:"public"`
}

// clearSeedIn reports whether b holds, anywhere, the 32-byte seed of the
// Ed25519 public key public.
func clearSeedIn(b, public []byte) bool {
	for i := 0; i+ed25519.SeedSize <= len(b); i++ {
		if bytes.Equal(ed25519.NewKeyFromSeed(b[i:i+ed25519.SeedSize]).Public().(ed25519.PublicKey), public) {
			return true
		}
	}
	return false
}

// TestSigningKeysAreSealedInTheDatabase reads the signing_keys rows
// themselves, on SQLite and PostgreSQL, under the real token adapter with
// a key encryption secret (README.md, "Signing keys at rest"): no private
// half is in clear in a column, after the first start, rotations and a
// start that seals a key stored before the secret was configured.
func TestSigningKeysAreSealedInTheDatabase(t *testing.T) {
	t.Parallel()
	secret := []byte(strings.Repeat("s", 40))
	rows := func(t *testing.T, db *bunstore.DB) []storedKeyRow {
		t.Helper()
		var rs []storedKeyRow
		if err := db.Bun().NewRaw(`SELECT id, "private", "public" FROM signing_keys`).Scan(t.Context(), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	sealed := func(t *testing.T, db *bunstore.DB, step string) {
		t.Helper()
		n := 0
		for _, r := range rows(t, db) {
			if len(r.Private) == 0 {
				continue
			}
			n++
			if !bytes.HasPrefix(r.Private, []byte("cgk1")) || clearSeedIn(r.Private, r.Public) {
				t.Errorf("%s: the row of key %s holds its private half in clear (%d bytes)", step, r.ID, len(r.Private))
			}
		}
		if n == 0 {
			t.Fatalf("%s: no row holds a private half; the test would prove nothing", step)
		}
	}
	start := func(t *testing.T, db *bunstore.DB, secret []byte) *josejwt.Tokens {
		t.Helper()
		tok, err := josejwt.New(context.WithoutCancel(t.Context()), josejwt.Options{Keys: bunstore.NewKeyStore(db),
			Clock: system.Clock{}, KeyEncryptionSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		t.Run("keys made with the secret", func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			tok := start(t, db, secret)
			sealed(t, db, "the first key")
			if _, err := tok.Rotate(t.Context(), false); err != nil {
				t.Fatal(err)
			}
			sealed(t, db, "a rotation published ahead")
			if _, err := tok.Rotate(t.Context(), true); err != nil {
				t.Fatal(err)
			}
			sealed(t, db, "a rotation at once")
		})
		t.Run("a key stored in clear before the secret", func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			plain := start(t, db, nil)
			rs := rows(t, db)
			if len(rs) != 1 || !clearSeedIn(rs[0].Private, rs[0].Public) {
				t.Fatal("without a secret the key is not stored in clear; the check below would prove nothing")
			}
			old := rs[0]
			now := time.Now()
			access, err := plain.Issuer().AccessToken(t.Context(), domain.Claims{Kind: domain.AccessToken,
				Subject: "0195f3a4-0000-7000-8000-000000000001", ID: "jti-1", FamilyID: "fam-1", IssuedAt: now, ExpiresAt: now.Add(time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			tok := start(t, db, secret)
			sealed(t, db, "a start with the secret")
			// The key stored in clear is retired with its private half
			// erased, not sealed in place: the seed PostgreSQL may keep
			// in dead rows and WAL signs nothing. A new sealed key signs.
			keys, err := tok.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 2 || keys[0].ID == old.ID || keys[1].ID != old.ID || keys[1].RetiredAt == nil {
				t.Fatalf("keys after the start with the secret: %d, want a new one and %s retired", len(keys), old.ID)
			}
			for _, r := range rows(t, db) {
				if r.ID == old.ID && len(r.Private) != 0 {
					t.Errorf("the row of the key stored in clear keeps %d bytes of private half", len(r.Private))
				}
				if clearSeedIn(r.Private, old.Public) {
					t.Errorf("the row of key %s holds the seed stored in clear", r.ID)
				}
			}
			next, err := tok.Issuer().AccessToken(t.Context(), domain.Claims{Kind: domain.AccessToken,
				Subject: "0195f3a4-0000-7000-8000-000000000001", ID: "jti-2", FamilyID: "fam-1", IssuedAt: now, ExpiresAt: now.Add(time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			for name, access := range map[string]string{"the key stored in clear": access, "the new key": next} {
				c, err := tok.Verifier().AccessToken(t.Context(), access)
				if err != nil {
					t.Errorf("an access token of %s is refused: %v", name, err)
				}
				if name == "the new key" && c.KeyID != keys[0].ID {
					t.Errorf("a token signed after the start names %s, want the new %s", c.KeyID, keys[0].ID)
				}
			}
		})
	})
}
