package josejwt_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

func TestRetiredKeyVerifiesAccessTokensOnlyForTheAccessLifetime(t *testing.T) {
	t.Parallel()
	e := newEdDSA(t, func(o *josejwt.Options) { o.MaxTokenTTL, o.AccessTokenTTL = 30*domain.Day, 10*time.Minute })
	// Tokens signed with the old key before it retires, valid beyond the
	// key's window (issued later, as a holder of the stolen key could make;
	// within the access lifetime, which the verifier also checks).
	access := e.signed(t, nil, func(m map[string]any) {
		m["iat"], m["exp"] = e.clock.Now().Add(time.Minute).Unix(), e.clock.Now().Add(11*time.Minute).Unix()
	})
	refresh := e.issue(t, e.claims(domain.RefreshToken, 29*domain.Day))
	if _, err := e.tok.Rotate(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10*time.Minute + 4*time.Second)
	if _, err := e.verify(domain.AccessToken, access); err != nil {
		t.Fatalf("within the access lifetime plus leeway: %v", err)
	}
	e.clock.Advance(2 * time.Second)
	if _, err := e.verify(domain.AccessToken, access); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("access token of a key retired past the access lifetime: err = %v, want unauthenticated", err)
	}
	if set, _ := jwks(t, e.tok); len(set.Keys) != 1 {
		t.Errorf("JWKS lists %d keys past the access window, want the current one", len(set.Keys))
	}
	e.clock.Advance(20 * domain.Day)
	if _, err := e.verify(domain.RefreshToken, refresh); err != nil {
		t.Fatalf("a refresh token of a retired key stops working within the refresh lifetime: %v", err)
	}
}

func TestRevokedKeysVerifyNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newEdDSA(t, nil)
	b, err := josejwt.New(ctx, josejwt.Options{Keys: a.store, Clock: a.clock})
	if err != nil {
		t.Fatal(err)
	}
	tok := a.issue(t, a.claims(domain.AccessToken, 10*time.Minute))
	forged := a.signed(t, nil, nil) // any token the key could sign
	if _, err := b.Verifier().AccessToken(ctx, tok); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	if err := a.tok.Revoke(ctx, "no-such-kid"); !errors.Is(err, domain.ErrSigningKeyNotFound) {
		t.Fatalf("Revoke(unknown) = %v, want ErrSigningKeyNotFound", err)
	}
	if err := a.tok.Revoke(ctx, a.kid); err != nil {
		t.Fatalf("Revoke(current): %v", err)
	}
	for _, tk := range []string{tok, forged} {
		if _, err := a.verify(domain.AccessToken, tk); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("the revoking process accepts a token of the revoked key: %v", err)
		}
	}
	keys, err := a.tok.List(ctx)
	if err != nil || len(keys) != 2 {
		t.Fatalf("List = %d keys, %v; want the new current and the revoked", len(keys), err)
	}
	if keys[0].StateAt(a.clock.Now()) != domain.KeySigning || keys[1].ID != a.kid || keys[1].StateAt(a.clock.Now()) != domain.KeyRevoked {
		t.Errorf("states = %s %s, %s %s; want a new current key and %s revoked",
			keys[0].ID, keys[0].StateAt(a.clock.Now()), keys[1].ID, keys[1].StateAt(a.clock.Now()), a.kid)
	}
	for _, k := range keys {
		if k.Private != nil {
			t.Errorf("List shows the private half of %s", k.ID)
		}
	}
	if h := header(t, a.issue(t, a.claims(domain.AccessToken, time.Minute))); h["kid"] != keys[0].ID {
		t.Errorf("signs with %v after revoking the current key, want %s", h["kid"], keys[0].ID)
	}
	// Another replica stops accepting within its reload period.
	a.clock.Advance(josejwt.DefaultKeyReload)
	if _, err := b.Verifier().AccessToken(ctx, tok); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("a replica accepts a token of a revoked key after its reload period: %v", err)
	}
	if josejwt.DefaultKeyReload > time.Minute {
		t.Errorf("DefaultKeyReload %v exceeds the minute the README's \"Commands\" allows", josejwt.DefaultKeyReload)
	}
}

func TestKeysAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secret := []byte(strings.Repeat("k", 40))
	newTokens := func(store *memKeys, clock *fakeClock, secret []byte) (*josejwt.Tokens, error) {
		return josejwt.New(ctx, josejwt.Options{Keys: store, Clock: clock, KeyEncryptionSecret: secret})
	}

	t.Run("a key generated with the secret is stored sealed and works", func(t *testing.T) {
		t.Parallel()
		store, clock := &memKeys{}, newClock()
		tok, err := newTokens(store, clock, secret)
		if err != nil {
			t.Fatal(err)
		}
		cur := store.current()
		if len(cur.Private) == 32 || !bytes.HasPrefix(cur.Private, []byte("cgk1")) {
			t.Fatalf("stored private half is %d bytes, not sealed", len(cur.Private))
		}
		e := &env{tok: tok, clock: clock}
		if _, err := e.verify(domain.AccessToken, e.issue(t, e.claims(domain.AccessToken, time.Minute))); err != nil {
			t.Fatal(err)
		}
		for name, s := range map[string][]byte{"without the secret": nil, "with another secret": []byte(strings.Repeat("x", 32))} {
			if _, err := newTokens(store, clock, s); err == nil || !strings.Contains(err.Error(), cur.ID) {
				t.Errorf("starting %s: err = %v, want an error naming the key", name, err)
			}
		}
	})

	t.Run("a key stored in clear is replaced on start by a sealed one; its tokens keep working", func(t *testing.T) {
		t.Parallel()
		store, clock := &memKeys{}, newClock()
		plain, err := newTokens(store, clock, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := store.current()
		tok := (&env{tok: plain, clock: clock}).issue(t, (&env{clock: clock}).claims(domain.AccessToken, 10*time.Minute))
		sealed, err := newTokens(store, clock, secret)
		if err != nil {
			t.Fatal(err)
		}
		after := store.current()
		if after.ID == before.ID || !bytes.HasPrefix(after.Private, []byte("cgk1")) || bytes.Contains(after.Private, before.Private) {
			t.Fatalf("after start with the secret: kid %s (was %s), %d bytes; want a new key, sealed", after.ID, before.ID, len(after.Private))
		}
		if _, err := sealed.Verifier().AccessToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a sealed key moved to another id does not open", func(t *testing.T) {
		t.Parallel()
		store, clock := &memKeys{}, newClock()
		if _, err := newTokens(store, clock, secret); err != nil {
			t.Fatal(err)
		}
		cur := store.current()
		store.keys[0].ID = "other-kid"
		if _, err := newTokens(store, clock, secret); err == nil {
			t.Fatalf("a sealed seed of %s opened as other-kid", cur.ID)
		}
	})

	t.Run("a short secret is refused", func(t *testing.T) {
		t.Parallel()
		if _, err := newTokens(&memKeys{}, newClock(), []byte("short")); err == nil {
			t.Fatal("New accepted a 5-byte key encryption secret")
		}
	})
}
