package josejwt

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"io"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// A generated kid never begins with "-", so `cachegate keys revoke KID`
// never needs "--" (README.md, "Commands"). One thumbprint in 64 does:
// thousands of keys would show one.
func TestGeneratedKidsNeverLookLikeFlags(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3000 {
		k, err := newEd25519Key(rand.Reader, now)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(k.ID, "-") {
			t.Fatalf("key %d has the kid %q", i, k.ID)
		}
	}

	// A seed whose kid would begin with "-" is drawn again: the key is
	// the next seed's.
	var dash []byte
	for dash == nil {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			t.Fatal(err)
		}
		if kid := thumbprintKid(t, seed); kid[0] == '-' {
			dash = seed
		}
	}
	next := bytes.Repeat([]byte{1}, ed25519.SeedSize)
	if thumbprintKid(t, next)[0] == '-' {
		t.Fatal("the second seed's kid begins with '-' too; pick another")
	}
	k, err := newEd25519Key(io.MultiReader(bytes.NewReader(dash), bytes.NewReader(next)), now)
	if err != nil {
		t.Fatal(err)
	}
	if k.ID != thumbprintKid(t, next) || !bytes.Equal(k.Private, next) {
		t.Errorf("key from a seed whose kid begins with '-': kid %q, want the next seed's %q", k.ID, thumbprintKid(t, next))
	}
}

// thumbprintKid returns the first 16 characters of the RFC 7638
// thumbprint of the key of seed.
func thumbprintKid(t *testing.T, seed []byte) string {
	t.Helper()
	jwk := jose.JSONWebKey{Key: ed25519.NewKeyFromSeed(seed).Public()}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(tp)[:16]
}
