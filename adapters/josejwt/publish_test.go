package josejwt_test

import (
	"context"
	"crypto/ed25519"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

// kidOf returns the kid e signs an access token with now.
func (e *env) kidOf(t *testing.T) string {
	t.Helper()
	return header(t, e.issue(t, e.claims(domain.AccessToken, time.Minute)))["kid"].(string)
}

// A rotation publishes the new key ahead of signing with it (README.md,
// "Tokens"): clients caching the JWKS learn the key before its first
// token.
func TestRotationPublishesTheNewKeyAheadOfSigning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("without now the old key keeps signing and the new key is in the JWKS at once", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		start := e.clock.Now()
		key, err := e.tok.Rotate(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if !key.SignsFrom.Equal(start.Add(josejwt.DefaultKeyPublishAhead)) || key.Private != nil {
			t.Errorf("Rotate = signs from %v (private %d bytes), want %v and no private half",
				key.SignsFrom, len(key.Private), start.Add(josejwt.DefaultKeyPublishAhead))
		}
		if got := e.kidOf(t); got != e.kid {
			t.Errorf("signs with %s right after the rotation, want the old %s", got, e.kid)
		}
		if set, _ := jwks(t, e.tok); !slices.Equal(kids(set), []string{key.ID, e.kid}) {
			t.Errorf("JWKS kids = %v, want [%s %s]", kids(set), key.ID, e.kid)
		}
		keys, err := e.tok.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s0, s1 := keys[0].StateAt(start), keys[1].StateAt(start); s0 != domain.KeyPublished || s1 != domain.KeySigning {
			t.Errorf("states = %s, %s; want published, signing", s0, s1)
		}
		e.clock.Advance(josejwt.DefaultKeyPublishAhead - time.Microsecond)
		if got := e.kidOf(t); got != e.kid {
			t.Errorf("signs with %s just before the publish-ahead time, want the old %s", got, e.kid)
		}
		e.clock.Advance(time.Microsecond)
		if got := e.kidOf(t); got != key.ID {
			t.Errorf("signs with %s at the publish-ahead time, want the new %s", got, key.ID)
		}
	})

	t.Run("with now the new key signs at once", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		key, err := e.tok.Rotate(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if !key.SignsFrom.Equal(e.clock.Now()) {
			t.Errorf("signs from %v, want now %v", key.SignsFrom, e.clock.Now())
		}
		if got := e.kidOf(t); got != key.ID {
			t.Errorf("signs with %s, want the new %s", got, key.ID)
		}
	})

	t.Run("the publish-ahead time is configurable", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, func(o *josejwt.Options) { o.KeyPublishAhead = 90 * time.Second })
		key, err := e.tok.Rotate(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(89 * time.Second)
		if got := e.kidOf(t); got != e.kid {
			t.Errorf("signs with %s after 89 s, want the old %s", got, e.kid)
		}
		e.clock.Advance(time.Second)
		if got := e.kidOf(t); got != key.ID {
			t.Errorf("signs with %s after 90 s, want the new %s", got, key.ID)
		}
	})

	t.Run("replicas switch at the same instant, without reading the store again", func(t *testing.T) {
		t.Parallel()
		a := newEdDSA(t, func(o *josejwt.Options) { o.KeyReload = time.Hour })
		tb, err := josejwt.New(ctx, josejwt.Options{Keys: a.store, Clock: a.clock, KeyReload: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		b := &env{name: "B", tok: tb, clock: a.clock, store: a.store}
		key, err := a.tok.Rotate(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		a.clock.Advance(time.Minute)
		if err := b.tok.Reload(ctx); err != nil { // its periodic reload
			t.Fatal(err)
		}
		if got := b.kidOf(t); got != a.kid {
			t.Fatalf("replica signs with %s a minute after the rotation, want the old %s", got, a.kid)
		}
		if set, _ := jwks(t, b.tok); !slices.Contains(kids(set), key.ID) {
			t.Fatalf("the replica's JWKS %v lacks the published key %s", kids(set), key.ID)
		}
		loads := a.store.loads.Load()
		a.clock.Advance(time.Minute - time.Microsecond)
		for _, e := range []*env{a, b} {
			if got := e.kidOf(t); got != a.kid {
				t.Errorf("%s signs with %s just before the switch, want %s", e.name, got, a.kid)
			}
		}
		a.clock.Advance(time.Microsecond)
		for _, e := range []*env{a, b} {
			if got := e.kidOf(t); got != key.ID {
				t.Errorf("%s signs with %s at the switch, want %s", e.name, got, key.ID)
			}
		}
		if got := a.store.loads.Load(); got != loads {
			t.Errorf("the store was read %d times around the switch, want none", got-loads)
		}
	})

	t.Run("the old key's private half is erased once it has retired", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		if _, err := e.tok.Rotate(ctx, false); err != nil {
			t.Fatal(err)
		}
		privateOf := func(kid string) int {
			keys, _ := e.store.SigningKeys(ctx)
			for _, k := range keys {
				if k.ID == kid {
					return len(k.Private)
				}
			}
			return -1
		}
		if n := privateOf(e.kid); n == 0 {
			t.Fatal("the signing key lost its private half when the next key was published")
		}
		e.clock.Advance(josejwt.DefaultKeyPublishAhead + time.Minute)
		if err := e.tok.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if n := privateOf(e.kid); n != 0 {
			t.Errorf("the retired key keeps %d bytes of private half", n)
		}
	})

	t.Run("revoking a published key withdraws only it: the signing key keeps signing", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		tb, err := josejwt.New(ctx, josejwt.Options{Keys: e.store, Clock: e.clock})
		if err != nil {
			t.Fatal(err)
		}
		b := &env{name: "B", tok: tb, clock: e.clock, store: e.store}
		key, err := e.tok.Rotate(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.tok.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		tok := e.issue(t, e.claims(domain.AccessToken, 10*time.Minute))
		if err := e.tok.Revoke(ctx, key.ID); err != nil {
			t.Fatal(err)
		}
		if err := b.tok.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		keys, err := e.tok.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || keys[0].ID != key.ID || keys[0].StateAt(e.clock.Now()) != domain.KeyRevoked ||
			keys[1].ID != e.kid || keys[1].StateAt(e.clock.Now()) != domain.KeySigning {
			t.Fatalf("keys after revoking the published one: %d, want it revoked and %s signing", len(keys), e.kid)
		}
		for _, at := range []time.Duration{0, josejwt.DefaultKeyPublishAhead + time.Minute} {
			e.clock.Advance(at)
			for _, r := range []*env{e, b} {
				if got := r.kidOf(t); got != e.kid {
					t.Errorf("%s signs with %s %v after revoking the published key, want %s still", r.name, got, at, e.kid)
				}
				if set, _ := jwks(t, r.tok); !slices.Equal(kids(set), []string{e.kid}) {
					t.Errorf("%s: JWKS kids = %v, want only the signing %s", r.name, kids(set), e.kid)
				}
			}
		}
		if _, err := b.verify(domain.AccessToken, tok); err != nil {
			t.Errorf("a token of the signing key is refused after the revocation of the published one: %v", err)
		}
	})
}

// A process whose clock lags the one that erased a retiring key's private
// half (5 s after its retirement, by that one's clock) reads a key it
// cannot sign with and a next key not yet due: it signs with the next
// key, published already, rather than fail.
func TestAClockLaggingTheSwitchSignsWithThePublishedKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEdDSA(t, nil)
	key, err := e.tok.Rotate(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetSigningKeyPrivate(ctx, e.kid, nil); err != nil { // a peer erased it
		t.Fatal(err)
	}
	lagging, err := josejwt.New(ctx, josejwt.Options{Keys: e.store, Clock: e.clock})
	if err != nil {
		t.Fatalf("New on a store whose retiring key is erased: %v", err)
	}
	l := &env{name: "lagging", tok: lagging, clock: e.clock, store: e.store}
	if got := l.kidOf(t); got != key.ID {
		t.Errorf("signs with %s, want the published %s", got, key.ID)
	}
}

// A key published ahead verifies no token before it signs: a token its
// stolen private half forges then, or backdates to before its
// activation, is refused (the JWKS lists the key, so any client would
// take it); from its activation its tokens pass.
func TestAPublishedKeyVerifiesNothingBeforeItSigns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEdDSA(t, nil)
	k, err := e.tok.Rotate(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := e.store.SigningKeys(ctx)
	if err != nil || stored[0].ID != k.ID {
		t.Fatalf("SigningKeys = %d keys, %v; want the published key first", len(stored), err)
	}
	pub := *e
	pub.key, pub.kid = ed25519.NewKeyFromSeed(stored[0].Private), k.ID
	refresh := func(m map[string]any) {
		m["aud"] = "cachegate:refresh"
		delete(m, "client_id")
	}
	typ := map[domain.TokenKind]map[string]any{domain.AccessToken: nil, domain.RefreshToken: {"typ": "refresh+jwt"}}
	edit := map[domain.TokenKind]func(map[string]any){domain.AccessToken: nil, domain.RefreshToken: refresh}
	want := func(when string, kind domain.TokenKind, tok string, ok bool) {
		t.Helper()
		if _, err := e.verify(kind, tok); ok != (err == nil) {
			t.Errorf("%s: %s token of the published key: err = %v, want accepted %v", when, kind, err, ok)
		}
	}
	for _, kind := range []domain.TokenKind{domain.AccessToken, domain.RefreshToken} {
		want("right after the rotation", kind, pub.signed(t, typ[kind], edit[kind]), false)
	}
	e.clock.Advance(josejwt.DefaultKeyPublishAhead - josejwt.DefaultLeeway - time.Second)
	for _, kind := range []domain.TokenKind{domain.AccessToken, domain.RefreshToken} {
		want("6 s before its activation", kind, pub.signed(t, typ[kind], edit[kind]), false)
	}
	e.clock.Advance(josejwt.DefaultLeeway + time.Second)
	for _, kind := range []domain.TokenKind{domain.AccessToken, domain.RefreshToken} {
		want("at its activation", kind, pub.signed(t, typ[kind], edit[kind]), true)
		backdated := pub.signed(t, typ[kind], func(m map[string]any) {
			if f := edit[kind]; f != nil {
				f(m)
			}
			m["iat"] = e.clock.Now().Add(-time.Minute).Unix()
		})
		want("issued a minute before its activation", kind, backdated, false)
	}
	// What the issuer signs with it from then on passes.
	if got := e.kidOf(t); got != k.ID {
		t.Fatalf("signs with %s at the activation, want %s", got, k.ID)
	}
	for _, kind := range []domain.TokenKind{domain.AccessToken, domain.RefreshToken} {
		want("issued by the issuer", kind, e.issue(t, e.claims(kind, time.Minute)), true)
	}
}
