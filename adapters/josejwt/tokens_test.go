package josejwt_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range bothModes(t, nil) {
		for _, kind := range []domain.TokenKind{domain.AccessToken, domain.RefreshToken} {
			t.Run(e.name+" "+kind.String()+" token verifies with the claims it was issued with", func(t *testing.T) {
				t.Parallel()
				in := e.claims(kind, 15*time.Minute)
				in.IssuedAt = in.IssuedAt.Add(300 * time.Millisecond) // JWT times are whole seconds
				tok := e.issue(t, in)
				got, err := e.verify(kind, tok)
				if err != nil {
					t.Fatalf("verify: %v", err)
				}
				want := in
				want.IssuedAt, want.ExpiresAt = in.IssuedAt.Truncate(time.Second), in.ExpiresAt.Truncate(time.Second)
				want.KeyID = e.kid // the verifier names the key that signed it
				if got != want {
					t.Errorf("claims = %+v, want %+v", got, want)
				}
				h := header(t, tok)
				wantTyp := map[domain.TokenKind]string{domain.AccessToken: "at+jwt", domain.RefreshToken: "refresh+jwt"}[kind]
				if h["typ"] != wantTyp || h["kid"] != e.kid || h["alg"] != string(e.alg) {
					t.Errorf("header = %v, want typ %q, kid %q, alg %q", h, wantTyp, e.kid, e.alg)
				}
				p := segment(t, tok, 1)
				for _, k := range []string{"sub", "iat", "exp", "iss", "aud", "jti", "sid"} {
					if _, ok := p[k]; !ok {
						t.Errorf("payload lacks %q: %v", k, p)
					}
				}
				wantAud := map[domain.TokenKind]string{domain.AccessToken: "cachegate", domain.RefreshToken: "cachegate:refresh"}[kind]
				if p["iss"] != "cachegate" || p["aud"] != wantAud {
					t.Errorf("iss, aud = %v, %v; want cachegate, %s", p["iss"], p["aud"], wantAud)
				}
			})
		}
	}
}

func TestKindsCannotStandInForEachOther(t *testing.T) {
	t.Parallel()
	for _, e := range bothModes(t, nil) {
		access := e.issue(t, e.claims(domain.AccessToken, 10*time.Minute))
		refresh := e.issue(t, e.claims(domain.RefreshToken, time.Hour))
		cases := []struct {
			name string
			as   domain.TokenKind
			tok  string
		}{
			{"an access token is refused as a refresh token", domain.RefreshToken, access},
			{"a refresh token is refused as an access token", domain.AccessToken, refresh},
		}
		for _, tc := range cases {
			t.Run(e.name+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				if _, err := e.verify(tc.as, tc.tok); !errors.Is(err, domain.ErrUnauthenticated) {
					t.Fatalf("err = %v, want ErrUnauthenticated", err)
				}
			})
		}
	}
}

func TestIssuerRefusesIncompleteClaims(t *testing.T) {
	t.Parallel()
	e := newEdDSA(t, nil)
	good := e.claims(domain.AccessToken, time.Minute)
	cases := []struct {
		name string
		edit func(*domain.Claims)
	}{
		{"claims without a subject are refused", func(c *domain.Claims) { c.Subject = "" }},
		{"claims without an id are refused", func(c *domain.Claims) { c.ID = "" }},
		{"claims without an issue time are refused", func(c *domain.Claims) { c.IssuedAt = time.Time{} }},
		{"claims without an expiry are refused", func(c *domain.Claims) { c.ExpiresAt = time.Time{} }},
		{"claims expiring when issued are refused", func(c *domain.Claims) { c.ExpiresAt = c.IssuedAt }},
		{"refresh claims are refused as an access token", func(c *domain.Claims) { c.Kind = domain.RefreshToken }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := good
			tc.edit(&c)
			if tok, err := e.tok.Issuer().AccessToken(context.Background(), c); err == nil {
				t.Fatalf("signed %d bytes, want an error", len(tok))
			}
		})
	}
	t.Run("claims without a kind are signed as the kind asked for", func(t *testing.T) {
		t.Parallel()
		c := good
		c.Kind = 0
		tok, err := e.tok.Issuer().RefreshToken(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.verify(domain.RefreshToken, tok); err != nil || got.Kind != domain.RefreshToken {
			t.Fatalf("verify = %v, %v", got.Kind, err)
		}
	})
}

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	clock, keys := newClock(), &memKeys{}
	cases := []struct {
		name string
		o    josejwt.Options
		ok   bool
	}{
		{"defaults with a key store and a clock are fine", josejwt.Options{Keys: keys, Clock: clock}, true},
		{"an HS256 secret needs no key store", josejwt.Options{HS256Secret: testSecret, Clock: clock}, true},
		{"a leeway of 5s is the most allowed", josejwt.Options{Keys: keys, Clock: clock, Leeway: 5 * time.Second}, true},
		{"a negative leeway means none", josejwt.Options{Keys: keys, Clock: clock, Leeway: -1}, true},
		{"a leeway above 5s is refused", josejwt.Options{Keys: keys, Clock: clock, Leeway: 6 * time.Second}, false},
		{"an HS256 secret of 31 bytes is refused", josejwt.Options{HS256Secret: testSecret[:31], Clock: clock}, false},
		{"an empty HS256 secret is refused", josejwt.Options{HS256Secret: []byte{}, Clock: clock}, false},
		{"EdDSA without a key store is refused", josejwt.Options{Clock: clock}, false},
		{"no clock is refused", josejwt.Options{Keys: keys}, false},
		{"a negative max token TTL is refused", josejwt.Options{Keys: keys, Clock: clock, MaxTokenTTL: -time.Hour}, false},
		{"a negative reload interval is refused", josejwt.Options{Keys: keys, Clock: clock, KeyReload: -time.Second}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := josejwt.New(context.Background(), tc.o)
			if (err == nil) != tc.ok {
				t.Fatalf("New: err = %v, want ok %v", err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), string(testSecret[:16])) {
				t.Fatalf("error quotes the secret")
			}
		})
	}
}

func TestNewOnAStore(t *testing.T) {
	t.Parallel()
	t.Run("an empty store gets one Ed25519 key", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		keys, _ := e.store.SigningKeys(context.Background())
		if len(keys) != 1 || keys[0].Algorithm != "EdDSA" || len(keys[0].Private) != 32 || keys[0].RetiredAt != nil {
			t.Fatalf("store holds %+v, want one current EdDSA key", keys)
		}
	})
	t.Run("a second instance reuses the stored key", func(t *testing.T) {
		t.Parallel()
		e := newEdDSA(t, nil)
		if _, err := josejwt.New(context.Background(), josejwt.Options{Keys: e.store, Clock: e.clock}); err != nil {
			t.Fatal(err)
		}
		if keys, _ := e.store.SigningKeys(context.Background()); len(keys) != 1 {
			t.Fatalf("store holds %d keys, want 1", len(keys))
		}
	})
	t.Run("a malformed stored key fails start-up", func(t *testing.T) {
		t.Parallel()
		store := &memKeys{}
		_ = store.AddSigningKey(context.Background(), domain.SigningKey{ID: "bad", Algorithm: "EdDSA",
			Private: make([]byte, 32), Public: make([]byte, 32), DateCreated: newClock().Now()})
		if _, err := josejwt.New(context.Background(), josejwt.Options{Keys: store, Clock: newClock()}); err == nil {
			t.Fatal("New succeeded with a key whose halves do not match")
		}
	})
	t.Run("an unreachable store fails start-up", func(t *testing.T) {
		t.Parallel()
		store := &memKeys{}
		store.fail.Store(true)
		_, err := josejwt.New(context.Background(), josejwt.Options{Keys: store, Clock: newClock()})
		if !errors.Is(err, errStoreDown) {
			t.Fatalf("New: err = %v, want the store's error", err)
		}
	})
	t.Run("stored keys of another algorithm are ignored in EdDSA mode", func(t *testing.T) {
		t.Parallel()
		store := &memKeys{}
		_ = store.AddSigningKey(context.Background(), domain.SigningKey{ID: "hs", Algorithm: "HS256",
			Private: testSecret, DateCreated: newClock().Now()})
		e := &env{clock: newClock()}
		tok, err := josejwt.New(context.Background(), josejwt.Options{Keys: store, Clock: e.clock})
		if err != nil {
			t.Fatal(err)
		}
		set, _ := jwks(t, tok)
		if len(set.Keys) != 1 || set.Keys[0].KeyID == "hs" {
			t.Fatalf("JWKS kids = %v, want one new EdDSA key", kids(set))
		}
	})
}

func TestHS256Mode(t *testing.T) {
	t.Parallel()
	e := newHS256(t, nil)
	t.Run("the JWKS is empty", func(t *testing.T) {
		t.Parallel()
		b, err := e.tok.JWKS(context.Background())
		if err != nil || string(b) != `{"keys":[]}` {
			t.Fatalf("JWKS = %s, %v", b, err)
		}
	})
	t.Run("rotation is refused", func(t *testing.T) {
		t.Parallel()
		if _, err := e.tok.Rotate(context.Background(), true); err == nil {
			t.Fatal("Rotate succeeded")
		}
	})
	t.Run("the kid does not reveal the secret", func(t *testing.T) {
		t.Parallel()
		tok := e.issue(t, e.claims(domain.AccessToken, time.Minute))
		if strings.Contains(tok, string(testSecret[:8])) || strings.Contains(string(testSecret), e.kid) {
			t.Fatal("token or kid carries the secret")
		}
	})
	t.Run("another secret yields another kid", func(t *testing.T) {
		t.Parallel()
		other := newHS256(t, func(o *josejwt.Options) { o.HS256Secret = []byte(strings.Repeat("x", 32)) })
		if other.kid == e.kid {
			t.Fatal("two secrets share a kid")
		}
		tok := other.issue(t, other.claims(domain.AccessToken, time.Minute))
		if _, err := e.verify(domain.AccessToken, tok); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("token of another secret: err = %v", err)
		}
	})
}
