package josejwt_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

// ReadRefreshToken makes every check of RefreshToken but the signature's
// (ports.RefreshTokenReader): the refresh store then accepts the claims
// only by the digest of the exact string it issued.
func TestReadRefreshTokenChecksAllButTheSignature(t *testing.T) {
	t.Parallel()
	for _, e := range bothModes(t, nil) {
		read := func(tok string) (domain.Claims, error) {
			return e.tok.Verifier().ReadRefreshToken(context.Background(), tok)
		}
		refreshPayload := func(edit func(m map[string]any)) string {
			return e.payloadJSON(t, func(m map[string]any) {
				m["aud"] = "cachegate:refresh"
				m["exp"] = e.clock.Now().Add(time.Hour).Unix()
				if edit != nil {
					edit(m)
				}
			})
		}
		var wrongKey any = []byte("another-secret-0123456789abcdef-0123456789")
		if e.alg == jose.EdDSA {
			wrongKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
		}
		refreshHeader := map[string]any{"kid": e.kid, "typ": "refresh+jwt"}

		t.Run(e.name+" a genuine token reads as it verifies, with its digest", func(t *testing.T) {
			tok := e.issue(t, e.claims(domain.RefreshToken, time.Hour))
			got, err := read(tok)
			if err != nil {
				t.Fatalf("ReadRefreshToken: %v", err)
			}
			want, err := e.verify(domain.RefreshToken, tok)
			if err != nil {
				t.Fatalf("RefreshToken: %v", err)
			}
			if want.Digest = domain.TokenDigest(tok); got != want {
				t.Errorf("read %+v, want the verified claims with the token's digest %+v", got, want)
			}
		})

		t.Run(e.name+" a token signed with another key reads, with its own digest, and does not verify", func(t *testing.T) {
			forged := forge(t, e.alg, wrongKey, refreshHeader, refreshPayload(nil))
			if _, err := e.verify(domain.RefreshToken, forged); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("RefreshToken(forged) = %v, want ErrUnauthenticated", err)
			}
			got, err := read(forged)
			if err != nil || got.Digest != domain.TokenDigest(forged) || got.Subject != "user-1" {
				t.Errorf("ReadRefreshToken(forged) = %+v, %v; want its claims and digest", got, err)
			}
		})

		for _, tc := range []struct {
			name string
			tok  func() string
		}{
			{"an access token", func() string { return e.issue(t, e.claims(domain.AccessToken, time.Minute)) }},
			{"an expired token", func() string {
				return forge(t, e.alg, wrongKey, refreshHeader, refreshPayload(func(m map[string]any) {
					m["exp"] = e.clock.Now().Add(-time.Hour).Unix()
				}))
			}},
			{"a token of another audience", func() string {
				return forge(t, e.alg, wrongKey, refreshHeader, refreshPayload(func(m map[string]any) { m["aud"] = "someone-else" }))
			}},
			{"a token of another issuer", func() string {
				return forge(t, e.alg, wrongKey, refreshHeader, refreshPayload(func(m map[string]any) { m["iss"] = "someone-else" }))
			}},
			{"a token without a subject", func() string {
				return forge(t, e.alg, wrongKey, refreshHeader, refreshPayload(func(m map[string]any) { delete(m, "sub") }))
			}},
			{"a token naming an unknown key", func() string {
				return forge(t, e.alg, wrongKey, map[string]any{"kid": "no-such-key", "typ": "refresh+jwt"}, refreshPayload(nil))
			}},
			{"a token of the access type", func() string {
				return forge(t, e.alg, wrongKey, map[string]any{"kid": e.kid, "typ": "at+jwt"}, refreshPayload(nil))
			}},
			{"a token of another algorithm", func() string {
				other, key := jose.HS256, any([]byte("another-secret-0123456789abcdef-0123456789"))
				if e.alg == jose.HS256 {
					other, key = jose.EdDSA, ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
				}
				return forge(t, other, key, refreshHeader, refreshPayload(nil))
			}},
			{"a token in non-canonical base64", func() string {
				return strings.Replace(e.issue(t, e.claims(domain.RefreshToken, time.Hour)), ".", ".\n", 1)
			}},
			{"a token too long", func() string { return strings.Repeat("a", 20000) + ".b.c" }},
		} {
			t.Run(e.name+" "+tc.name+" is refused", func(t *testing.T) {
				if c, err := read(tc.tok()); !errors.Is(err, domain.ErrUnauthenticated) {
					t.Errorf("ReadRefreshToken = %+v, %v; want ErrUnauthenticated", c, err)
				}
			})
		}
	}
}

func TestReadRefreshTokenRefusesTheTokensOfARevokedKey(t *testing.T) {
	t.Parallel()
	e := newEdDSA(t, nil)
	tok := e.issue(t, e.claims(domain.RefreshToken, time.Hour))
	if _, err := e.tok.Verifier().ReadRefreshToken(context.Background(), tok); err != nil {
		t.Fatalf("before the revocation: %v", err)
	}
	if err := e.tok.Revoke(context.Background(), e.kid); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if c, err := e.tok.Verifier().ReadRefreshToken(context.Background(), tok); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("after the revocation: %+v, %v; want ErrUnauthenticated", c, err)
	}
}

// The read takes a token whose header is the signer's own, byte for byte,
// without decoding that header; any other spelling is parsed in full.
// Both read the same claims, and both refuse a key retired longer ago
// than the refresh tokens' window.
func TestReadRefreshTokenReadsEveryHeaderSpellingAlike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, e := range bothModes(t, func(o *josejwt.Options) { o.MaxTokenTTL = time.Hour }) {
		own := e.issue(t, e.claims(domain.RefreshToken, 3*time.Hour))
		head, rest, _ := strings.Cut(own, ".")
		payload, _, _ := strings.Cut(rest, ".")
		if h := header(t, own); h["alg"] != string(e.alg) || h["kid"] != e.kid || h["typ"] != "refresh+jwt" || len(h) != 3 {
			t.Fatalf("%s: refresh token header %v, want alg %s, kid %s, typ refresh+jwt", e.name, h, e.alg, e.kid)
		}
		raw, err := base64.RawURLEncoding.DecodeString(payload)
		if err != nil {
			t.Fatal(err)
		}
		var other any = []byte("another-secret-0123456789abcdef-0123456789")
		if e.alg == jose.EdDSA {
			other = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
		}
		respelled := forge(t, e.alg, other, map[string]any{"kid": e.kid, "typ": "application/refresh+jwt"}, string(raw))
		if h, _, _ := strings.Cut(respelled, "."); h == head {
			t.Fatalf("%s: the respelled header is the signer's", e.name)
		}
		want, err := e.tok.Verifier().ReadRefreshToken(ctx, own)
		if err != nil {
			t.Fatalf("%s: read the signer's own token: %v", e.name, err)
		}
		got, err := e.tok.Verifier().ReadRefreshToken(ctx, respelled)
		if err != nil {
			t.Fatalf("%s: read the respelled token: %v", e.name, err)
		}
		got.Digest, want.Digest = domain.Digest{}, domain.Digest{}
		if got != want {
			t.Errorf("%s: respelled header reads %+v, the signer's %+v", e.name, got, want)
		}
		if e.alg != jose.EdDSA {
			continue
		}
		if _, err := e.tok.Rotate(ctx, true); err != nil {
			t.Fatalf("Rotate: %v", err)
		}
		e.clock.Advance(time.Hour + josejwt.DefaultLeeway + time.Second)
		for _, tok := range []string{own, respelled} {
			if c, err := e.tok.Verifier().ReadRefreshToken(ctx, tok); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Errorf("a token of a key retired beyond the window: %+v, %v; want ErrUnauthenticated", c, err)
			}
		}
	}
}
