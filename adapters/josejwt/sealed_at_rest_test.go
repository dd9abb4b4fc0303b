package josejwt_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

// holdsClearSeed reports whether stored holds, anywhere, a 32-byte seed
// whose Ed25519 public key is public: the private half in clear.
func holdsClearSeed(stored, public []byte) bool {
	for i := 0; i+ed25519.SeedSize <= len(stored); i++ {
		pub := ed25519.NewKeyFromSeed(stored[i : i+ed25519.SeedSize]).Public().(ed25519.PublicKey)
		if bytes.Equal(pub, public) {
			return true
		}
	}
	return false
}

// writeWatch is a memKeys that remembers every private half handed to it
// in clear: a clear seed written even for a moment stays in the database
// file's free pages and its WAL, so sealing it later is too late.
type writeWatch struct {
	*memKeys
	mu    sync.Mutex
	clear []string
}

func (w *writeWatch) note(kid string, private, public []byte) {
	if len(private) > 0 && (!bytes.HasPrefix(private, []byte("cgk1")) || holdsClearSeed(private, public)) {
		w.mu.Lock()
		w.clear = append(w.clear, kid)
		w.mu.Unlock()
	}
}

func (w *writeWatch) AddSigningKey(ctx context.Context, k domain.SigningKey, events ...domain.AuditEvent) error {
	w.note(k.ID, k.Private, k.Public)
	return w.memKeys.AddSigningKey(ctx, k, events...)
}

func (w *writeWatch) SetSigningKeyPrivate(ctx context.Context, kid string, private []byte) error {
	var public []byte
	keys, _ := w.memKeys.SigningKeys(ctx)
	for _, k := range keys {
		if k.ID == kid {
			public = k.Public
		}
	}
	w.note(kid, private, public)
	return w.memKeys.SetSigningKeyPrivate(ctx, kid, private)
}

func (w *writeWatch) clearWrites() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.clear)
}

// TestEveryPrivateHalfIsStoredSealedWithASecret pins the invariant of
// README.md, "Signing keys at rest": with a key encryption secret, no path
// that hands a private half to the key store (the first key, a rotation
// published ahead or at once, the key a revocation makes current, a key
// stored in clear before the secret was configured) hands it over in
// clear, not even for a moment.
func TestEveryPrivateHalfIsStoredSealedWithASecret(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	secret := []byte(strings.Repeat("k", 40))
	checkStore := func(t *testing.T, store *writeWatch, step string, wantPrivate int) {
		t.Helper()
		if clear := store.clearWrites(); len(clear) > 0 {
			t.Errorf("%s: keys %v were handed to the store in clear", step, clear)
		}
		keys, err := store.SigningKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range keys {
			if len(k.Private) == 0 {
				continue
			}
			n++
			if !bytes.HasPrefix(k.Private, []byte("cgk1")) || holdsClearSeed(k.Private, k.Public) {
				t.Errorf("%s: key %s is stored with its private half in clear (%d bytes)", step, k.ID, len(k.Private))
			}
		}
		if n < wantPrivate {
			t.Fatalf("%s: %d keys with a private half, want at least %d: the test would prove nothing", step, n, wantPrivate)
		}
	}

	store, clock := &writeWatch{memKeys: &memKeys{}}, newClock()
	tok, err := josejwt.New(ctx, josejwt.Options{Keys: store, Clock: clock, KeyEncryptionSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	checkStore(t, store, "the first key", 1)
	if _, err := tok.Rotate(ctx, false); err != nil {
		t.Fatal(err)
	}
	checkStore(t, store, "a rotation published ahead", 2)
	next, err := tok.Rotate(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	checkStore(t, store, "a rotation at once", 1)
	if err := tok.Revoke(ctx, next.ID); err != nil {
		t.Fatal(err)
	}
	checkStore(t, store, "the key a revocation makes current", 1)

	t.Run("a key stored in clear is replaced by a sealed one when the secret comes", func(t *testing.T) {
		t.Parallel()
		store, clock := &writeWatch{memKeys: &memKeys{}}, newClock()
		plain, err := josejwt.New(ctx, josejwt.Options{Keys: store.memKeys, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		old := store.current()
		if !holdsClearSeed(old.Private, old.Public) {
			t.Fatal("without a secret the key is not stored in clear: the check below would prove nothing")
		}
		e := &env{name: "plain", tok: plain, clock: clock, store: store.memKeys}
		access := e.issue(t, e.claims(domain.AccessToken, 10*time.Minute))
		refresh := e.issue(t, e.claims(domain.RefreshToken, 24*time.Hour))

		clock.Advance(time.Second)
		sealed, err := josejwt.New(ctx, josejwt.Options{Keys: store, Clock: clock, KeyEncryptionSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		checkStore(t, store, "a start with the secret", 1)
		keys, err := store.SigningKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || keys[0].ID == old.ID || keys[1].ID != old.ID {
			t.Fatalf("after the start with the secret the store holds %d keys, want a new one and %s", len(keys), old.ID)
		}
		now := clock.Now()
		if s0, s1 := keys[0].StateAt(now), keys[1].StateAt(now); s0 != domain.KeySigning || s1 != domain.KeyRetired || len(keys[1].Private) != 0 {
			t.Errorf("states %s, %s, the old key's private half %d bytes; want signing, retired and erased", s0, s1, len(keys[1].Private))
		}
		s := &env{name: "sealed", tok: sealed, clock: clock, store: store.memKeys}
		if got := s.kidOf(t); got != keys[0].ID {
			t.Errorf("signs with %s, want the new sealed %s", got, keys[0].ID)
		}
		// The retired key's public half verifies what it signed: no
		// session ends.
		if _, err := s.verify(domain.AccessToken, access); err != nil {
			t.Errorf("an access token of the key stored in clear is refused: %v", err)
		}
		if _, err := s.verify(domain.RefreshToken, refresh); err != nil {
			t.Errorf("a refresh token of the key stored in clear is refused: %v", err)
		}
		if set, _ := jwks(t, s.tok); !slices.Equal(kids(set), []string{keys[0].ID, old.ID}) {
			t.Errorf("JWKS kids = %v, want the new key and the retired one", kids(set))
		}
	})
}
