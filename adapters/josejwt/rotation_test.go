package josejwt_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

func TestRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEdDSA(t, nil)
	before := e.issue(t, e.claims(domain.AccessToken, 10*time.Minute))
	e.clock.Advance(time.Minute)
	key, err := e.tok.Rotate(ctx, true)
	if err != nil {
		t.Fatalf("Rotate: %v", err)
	}
	kid := key.ID

	t.Run("a token signed before the rotation still verifies", func(t *testing.T) {
		if _, err := e.verify(domain.AccessToken, before); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("new tokens carry the new kid and verify", func(t *testing.T) {
		after := e.issue(t, e.claims(domain.RefreshToken, time.Hour))
		if got := header(t, after)["kid"]; got != kid || kid == e.kid {
			t.Fatalf("kid = %v, want the new %q (old %q)", got, kid, e.kid)
		}
		if _, err := e.verify(domain.RefreshToken, after); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the JWKS lists the new key, then the retired one, as public EdDSA keys", func(t *testing.T) {
		set, raw := jwks(t, e.tok)
		if got := kids(set); !slices.Equal(got, []string{kid, e.kid}) {
			t.Fatalf("JWKS kids = %v, want [%s %s]", got, kid, e.kid)
		}
		for _, k := range raw {
			if k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["alg"] != "EdDSA" || k["use"] != "sig" || k["x"] == nil {
				t.Errorf("JWKS key %v lacks kty/crv/alg/use/x", k)
			}
			if _, ok := k["d"]; ok {
				t.Fatal("the JWKS publishes a private key")
			}
		}
	})
	t.Run("a third party verifies a token with the JWKS alone", func(t *testing.T) {
		set, _ := jwks(t, e.tok)
		parsed, err := jwt.ParseSigned(before, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			t.Fatal(err)
		}
		keys := set.Key(parsed.Headers[0].KeyID)
		var c jwt.Claims
		if len(keys) != 1 || parsed.Claims(keys[0].Key, &c) != nil || c.Subject == "" {
			t.Fatalf("the token does not verify with the published key %v", kids(set))
		}
	})
}

func TestRetiredKeysLeave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEdDSA(t, func(o *josejwt.Options) { o.MaxTokenTTL, o.AccessTokenTTL = time.Hour, time.Hour })
	old := e.kid
	key, err := e.tok.Rotate(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	kid := key.ID
	// Signed with the old key's identity after it retired: only the
	// retirement window keeps such a token alive.
	late := e.signed(t, nil, func(m map[string]any) { m["exp"] = e.clock.Now().Add(2 * time.Hour).Unix() })

	e.clock.Advance(time.Hour)
	if n, err := e.tok.PruneKeys(ctx); err != nil || n != 0 {
		t.Fatalf("PruneKeys within the window = %d, %v; want 0", n, err)
	}
	if set, _ := jwks(t, e.tok); !slices.Equal(kids(set), []string{kid, old}) {
		t.Fatalf("JWKS within the window = %v", kids(set))
	}

	e.clock.Advance(5 * time.Second) // MaxTokenTTL + leeway after the rotation
	set, _ := jwks(t, e.tok)
	if !slices.Equal(kids(set), []string{kid}) {
		t.Fatalf("JWKS after the window = %v, want only %s", kids(set), kid)
	}
	if _, err := e.verify(domain.AccessToken, late); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Fatalf("a token of a key retired past the window: err = %v", err)
	}
	e.clock.Advance(time.Second)
	if n, err := e.tok.PruneKeys(ctx); err != nil || n != 1 {
		t.Fatalf("PruneKeys = %d, %v; want 1", n, err)
	}
	if keys, _ := e.store.SigningKeys(ctx); len(keys) != 1 || keys[0].ID != kid {
		t.Fatalf("store keeps %d keys, want only the current one", len(keys))
	}
}

func TestReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	newPair := func(t *testing.T) (a, b *env) {
		a = newEdDSA(t, nil)
		tb, err := josejwt.New(ctx, josejwt.Options{Keys: a.store, Clock: a.clock})
		if err != nil {
			t.Fatal(err)
		}
		return a, &env{name: "B", tok: tb, clock: a.clock, store: a.store}
	}

	t.Run("a replica verifies the tokens of another", func(t *testing.T) {
		t.Parallel()
		a, b := newPair(t)
		if _, err := b.verify(domain.AccessToken, a.issue(t, a.claims(domain.AccessToken, time.Minute))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a replica learns a rotation from a token with the new kid, at most once a second", func(t *testing.T) {
		t.Parallel()
		a, b := newPair(t)
		key, err := a.tok.Rotate(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		kid := key.ID
		tok := a.issue(t, a.claims(domain.AccessToken, 10*time.Minute))
		loads := a.store.loads.Load()
		if _, err := b.verify(domain.AccessToken, tok); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("within a second of the last reload: err = %v, want refused", err)
		}
		if got := a.store.loads.Load(); got != loads {
			t.Fatalf("the store was read %d times within the second", got-loads)
		}
		a.clock.Advance(time.Second)
		if _, err := b.verify(domain.AccessToken, tok); err != nil {
			t.Fatalf("after a second: %v", err)
		}
		if got := header(t, b.issue(t, b.claims(domain.AccessToken, time.Minute)))["kid"]; got != kid {
			t.Fatalf("replica signs with %v, want %s", got, kid)
		}
	})
	t.Run("a replica signs with a rotated key after the reload interval", func(t *testing.T) {
		t.Parallel()
		a, b := newPair(t)
		key, err := a.tok.Rotate(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		kid := key.ID
		a.clock.Advance(josejwt.DefaultKeyReload / 2)
		if got := header(t, b.issue(t, b.claims(domain.AccessToken, time.Minute)))["kid"]; got == kid {
			t.Fatal("replica reloaded before the interval")
		}
		a.clock.Advance(josejwt.DefaultKeyReload / 2)
		if got := header(t, b.issue(t, b.claims(domain.AccessToken, time.Minute)))["kid"]; got != kid {
			t.Fatalf("replica signs with %v, want %s", got, kid)
		}
		if set, _ := jwks(t, b.tok); len(set.Keys) != 2 {
			t.Fatalf("replica JWKS = %v, want both keys", kids(set))
		}
	})
	t.Run("replicas that created their first keys together accept each other's tokens at once", func(t *testing.T) {
		t.Parallel()
		// b reads the store before a's key is there, then adds its own.
		a := newEdDSA(t, nil)
		hiding := &hidingKeys{memKeys: a.store, hidden: a.kid}
		hiding.hide.Store(true)
		b, err := josejwt.New(ctx, josejwt.Options{Keys: hiding, Clock: a.clock})
		if err != nil {
			t.Fatal(err)
		}
		hiding.hide.Store(false)
		if _, err := b.Verifier().AccessToken(ctx, a.issue(t, a.claims(domain.AccessToken, time.Minute))); err != nil {
			t.Fatalf("b refuses a's first token: %v", err)
		}
		bTok, err := b.Issuer().AccessToken(ctx, a.claims(domain.AccessToken, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.verify(domain.AccessToken, bTok); err != nil {
			t.Fatalf("a refuses b's first token: %v", err)
		}
	})
	t.Run("unknown kids cost at most one store read a second", func(t *testing.T) {
		t.Parallel()
		a, _ := newPair(t)
		a.clock.Advance(time.Second)
		loads := a.store.loads.Load()
		for range 50 {
			_, _ = a.verify(domain.AccessToken, a.signed(t, map[string]any{"kid": "unknown"}, nil))
		}
		if got := a.store.loads.Load() - loads; got != 1 {
			t.Fatalf("50 unknown kids read the store %d times, want 1", got)
		}
	})
	t.Run("a failing store keeps the keys already loaded", func(t *testing.T) {
		t.Parallel()
		a, b := newPair(t)
		tok := a.issue(t, a.claims(domain.AccessToken, 10*time.Minute))
		a.store.fail.Store(true)
		a.clock.Advance(2 * time.Minute)
		if err := b.tok.Reload(ctx); !errors.Is(err, errStoreDown) {
			t.Fatalf("Reload = %v, want the store's error", err)
		}
		if _, err := b.verify(domain.RefreshToken, a.issue(t, a.claims(domain.RefreshToken, time.Hour))); err != nil {
			t.Fatalf("verify with the store down: %v", err)
		}
		if _, err := b.verify(domain.AccessToken, tok); err != nil {
			t.Fatalf("verify with the store down: %v", err)
		}
	})
}

func TestConcurrentUseWithRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEdDSA(t, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if g == 0 && i%10 == 0 {
					if _, err := e.tok.Rotate(ctx, true); err != nil {
						t.Error(err)
					}
				}
				c := e.claims(domain.AccessToken, 10*time.Minute)
				tok, err := e.tok.Issuer().AccessToken(ctx, c)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := e.tok.Verifier().AccessToken(ctx, tok); err != nil {
					t.Error(err)
				}
				if _, err := e.tok.JWKS(ctx); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

func TestVerifyCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a cached token is refused once expired beyond the leeway", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		tok := e.issue(t, e.claims(domain.AccessToken, time.Minute))
		for range 2 {
			if _, err := e.verify(domain.AccessToken, tok); err != nil {
				t.Fatal(err)
			}
		}
		if n := josejwt.CacheLen(e.tok); n != 1 {
			t.Fatalf("cache holds %d tokens, want 1", n)
		}
		e.clock.Advance(time.Minute + 4*time.Second)
		if _, err := e.verify(domain.AccessToken, tok); err != nil {
			t.Fatalf("within the leeway: %v", err)
		}
		e.clock.Advance(time.Second)
		if _, err := e.verify(domain.AccessToken, tok); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("beyond the leeway: err = %v", err)
		}
	})
	t.Run("a cached token is refused once its key has been pruned", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, func(o *josejwt.Options) { o.MaxTokenTTL = time.Minute })
		tok := e.issue(t, e.claims(domain.AccessToken, 10*time.Minute))
		if _, err := e.verify(domain.AccessToken, tok); err != nil {
			t.Fatal(err)
		}
		if _, err := e.tok.Rotate(ctx, true); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(2 * time.Minute)
		if n, err := e.tok.PruneKeys(ctx); n != 1 || err != nil {
			t.Fatalf("PruneKeys = %d, %v", n, err)
		}
		if _, err := e.verify(domain.AccessToken, tok); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("err = %v, want refused", err)
		}
	})
	t.Run("a hit needs the exact string: a token changed in its signature is checked and refused", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		tok := e.issue(t, e.claims(domain.AccessToken, time.Minute))
		if _, err := e.verify(domain.AccessToken, tok); err != nil {
			t.Fatal(err)
		}
		// A character well inside the signature, so its bits all count.
		i, c := len(tok)-10, byte('A')
		if tok[i] == 'A' {
			c = 'B'
		}
		forged := tok[:i] + string(c) + tok[i+1:]
		if _, err := e.verify(domain.AccessToken, forged); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("a changed signature: err = %v, want refused", err)
		}
		if n := josejwt.CacheLen(e.tok); n != 1 {
			t.Fatalf("cache holds %d tokens, want 1 (the genuine one)", n)
		}
	})
	t.Run("refresh tokens are not cached", func(t *testing.T) {
		t.Parallel()
		e := newHS256(t, nil)
		if _, err := e.verify(domain.RefreshToken, e.issue(t, e.claims(domain.RefreshToken, time.Hour))); err != nil {
			t.Fatal(err)
		}
		if n := josejwt.CacheLen(e.tok); n != 0 {
			t.Fatalf("cache holds %d tokens, want 0", n)
		}
	})
	t.Run("the cache holds at most its size", func(t *testing.T) {
		t.Parallel()
		e := newHS256(t, func(o *josejwt.Options) { o.VerifyCacheSize = 5 })
		for i := range 20 {
			c := e.claims(domain.AccessToken, time.Duration(i+1)*time.Second)
			if _, err := e.verify(domain.AccessToken, e.issue(t, c)); err != nil {
				t.Fatal(err)
			}
		}
		if n := josejwt.CacheLen(e.tok); n != 5 {
			t.Fatalf("cache holds %d tokens, want 5", n)
		}
	})
	t.Run("a negative size disables the cache", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, func(o *josejwt.Options) { o.VerifyCacheSize = -1 })
		tok := e.issue(t, e.claims(domain.AccessToken, 10*time.Minute))
		for range 2 {
			if _, err := e.verify(domain.AccessToken, tok); err != nil {
				t.Fatal(err)
			}
		}
		if n := josejwt.CacheLen(e.tok); n != 0 {
			t.Fatalf("cache holds %d tokens, want 0", n)
		}
	})
}
