package josejwt_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// signed makes an access token with the genuine key, the given headers
// (kid and typ default to the genuine ones; nil removes one) and a claims
// set edited by edit.
func (e *env) signed(t testing.TB, headers map[string]any, edit func(map[string]any)) string {
	t.Helper()
	h := map[string]any{"kid": e.kid, "typ": "at+jwt"}
	for k, v := range headers {
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	return forge(t, e.alg, e.key, h, e.payloadJSON(t, edit))
}

func TestForgedTokensAreRefused(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) func(*env) int64 {
		return func(e *env) int64 { return e.clock.Now().Add(d).Unix() }
	}
	set := func(k string, v func(*env) int64) func(*env) func(map[string]any) {
		return func(e *env) func(map[string]any) { return func(m map[string]any) { m[k] = v(e) } }
	}
	cases := []struct {
		name  string
		build func(t *testing.T, e *env) string
		ok    bool
	}{
		{"a genuine token is accepted", func(t *testing.T, e *env) string { return e.signed(t, nil, nil) }, true},
		{"alg none is refused", func(t *testing.T, e *env) string {
			enc := base64.RawURLEncoding.EncodeToString
			return enc([]byte(`{"alg":"none","typ":"at+jwt","kid":"`+e.kid+`"}`)) + "." + enc([]byte(e.payloadJSON(t, nil))) + "."
		}, false},
		{"a token of the other algorithm is refused (HS256 keyed with the Ed25519 public key, or EdDSA)", func(t *testing.T, e *env) string {
			h := map[string]any{"kid": e.kid, "typ": "at+jwt"}
			if priv, ok := e.key.(ed25519.PrivateKey); ok {
				return forge(t, jose.HS256, []byte(priv.Public().(ed25519.PublicKey)), h, e.payloadJSON(t, nil))
			}
			_, priv, _ := ed25519.GenerateKey(rand.Reader)
			return forge(t, jose.EdDSA, priv, h, e.payloadJSON(t, nil))
		}, false},
		{"a token signed with another key under the genuine kid is refused", func(t *testing.T, e *env) string {
			h := map[string]any{"kid": e.kid, "typ": "at+jwt"}
			if e.alg == jose.EdDSA {
				_, priv, _ := ed25519.GenerateKey(rand.Reader)
				return forge(t, jose.EdDSA, priv, h, e.payloadJSON(t, nil))
			}
			return forge(t, jose.HS256, []byte(strings.Repeat("k", 32)), h, e.payloadJSON(t, nil))
		}, false},
		{"a tampered payload is refused", func(t *testing.T, e *env) string {
			parts := strings.Split(e.signed(t, nil, nil), ".")
			parts[1] = base64.RawURLEncoding.EncodeToString([]byte(e.payloadJSON(t, func(m map[string]any) { m["sub"] = "admin" })))
			return strings.Join(parts, ".")
		}, false},
		{"a tampered signature is refused", func(t *testing.T, e *env) string {
			tok := []byte(e.signed(t, nil, nil))
			i := strings.LastIndexByte(string(tok), '.') + 5
			tok[i] = b64url[(strings.IndexByte(b64url, tok[i])+1)%64]
			return string(tok)
		}, false},
		{"a signature with stray bits in its last character is refused", func(t *testing.T, e *env) string {
			tok := []byte(e.signed(t, nil, nil))
			i := len(tok) - 1
			tok[i] = b64url[strings.IndexByte(b64url, tok[i])^1]
			return string(tok)
		}, false},
		{"a genuine token with a trailing newline is refused", func(t *testing.T, e *env) string { return e.signed(t, nil, nil) + "\n" }, false},
		{"a genuine token with padding is refused", func(t *testing.T, e *env) string { return e.signed(t, nil, nil) + "==" }, false},
		{"a token expired 6s ago is refused", func(t *testing.T, e *env) string { return e.signed(t, nil, set("exp", at(-6*time.Second))(e)) }, false},
		{"a token expired 5s ago is refused", func(t *testing.T, e *env) string { return e.signed(t, nil, set("exp", at(-5*time.Second))(e)) }, false},
		{"a token expired 4s ago is accepted within the leeway", func(t *testing.T, e *env) string { return e.signed(t, nil, set("exp", at(-4*time.Second))(e)) }, true},
		{"a token issued 6s in the future is refused", func(t *testing.T, e *env) string { return e.signed(t, nil, set("iat", at(6*time.Second))(e)) }, false},
		{"a token issued 4s in the future is accepted within the leeway", func(t *testing.T, e *env) string { return e.signed(t, nil, set("iat", at(4*time.Second))(e)) }, true},
		{"a token not valid before a minute from now is refused", func(t *testing.T, e *env) string { return e.signed(t, nil, set("nbf", at(time.Minute))(e)) }, false},
		{"a wrong audience is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { m["aud"] = "other" })
		}, false},
		{"an audience list with ours is accepted", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { m["aud"] = []string{"other", "cachegate"} })
		}, true},
		{"a wrong issuer is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { m["iss"] = "other" })
		}, false},
		{"a missing exp is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { delete(m, "exp") })
		}, false},
		{"a missing iat is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { delete(m, "iat") })
		}, false},
		{"an exp as a string is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { m["exp"] = "tomorrow" })
		}, false},
		{"an empty sub is refused", func(t *testing.T, e *env) string { return e.signed(t, nil, func(m map[string]any) { m["sub"] = "" }) }, false},
		{"a missing jti is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { delete(m, "jti") })
		}, false},
		{"an access token without sid is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { delete(m, "sid") })
		}, false},
		{"an access token naming its session only in the old fam claim is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { delete(m, "sid"); m["fam"] = "fam-1" })
		}, false},
		{"an access token without client_id is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { delete(m, "client_id") })
		}, false},
		{"an access token of another client_id is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { m["client_id"] = "other-app" })
		}, false},
		{"an access token with an empty client_id is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { m["client_id"] = "" })
		}, false},
		{"an access token living 7 days is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, set("exp", at(7*domain.Day))(e))
		}, false},
		{"an access token living the access lifetime and a second is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, set("exp", at(josejwt.DefaultAccessTokenTTL+time.Second))(e))
		}, false},
		{"an access token living exactly the access lifetime is accepted", func(t *testing.T, e *env) string {
			return e.signed(t, nil, set("exp", at(josejwt.DefaultAccessTokenTTL))(e))
		}, true},
		{"an access token issued in the past and living too long is refused though not expired", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) {
				m["iat"], m["exp"] = at(-time.Hour)(e), at(time.Minute)(e)
			})
		}, false},
		{"a payload that is not an object is refused", func(t *testing.T, e *env) string {
			return forge(t, e.alg, e.key, map[string]any{"kid": e.kid, "typ": "at+jwt"}, `"hello"`)
		}, false},
		{"an unknown kid is refused", func(t *testing.T, e *env) string { return e.signed(t, map[string]any{"kid": "nope"}, nil) }, false},
		{"a missing kid is refused", func(t *testing.T, e *env) string { return e.signed(t, map[string]any{"kid": nil}, nil) }, false},
		{"a missing typ is refused", func(t *testing.T, e *env) string { return e.signed(t, map[string]any{"typ": nil}, nil) }, false},
		{"typ JWT is refused", func(t *testing.T, e *env) string { return e.signed(t, map[string]any{"typ": "JWT"}, nil) }, false},
		{"typ application/at+jwt is accepted", func(t *testing.T, e *env) string {
			return e.signed(t, map[string]any{"typ": "application/at+jwt"}, nil)
		}, true},
		{"the JSON serialization of a genuine token is refused", func(t *testing.T, e *env) string {
			s, _ := jose.NewSigner(jose.SigningKey{Algorithm: e.alg, Key: e.key},
				(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", e.kid))
			jws, _ := s.Sign([]byte(e.payloadJSON(t, nil)))
			return jws.FullSerialize()
		}, false},
		{"the empty string is refused", func(*testing.T, *env) string { return "" }, false},
		{"garbage is refused", func(*testing.T, *env) string { return "not a token" }, false},
		{"three dots of nothing are refused", func(*testing.T, *env) string { return ".." }, false},
		{"base64 that is not JSON is refused", func(*testing.T, *env) string { return "YWJj.YWJj.YWJj" }, false},
		{"a huge string is refused", func(*testing.T, *env) string {
			return strings.Repeat("a", josejwt.MaxTokenLen) + ".a.a"
		}, false},
		{"a huge genuine token is refused", func(t *testing.T, e *env) string {
			return e.signed(t, nil, func(m map[string]any) { m["pad"] = strings.Repeat("x", josejwt.MaxTokenLen) })
		}, false},
	}
	for _, e := range bothModes(t, nil) {
		for _, tc := range cases {
			t.Run(e.name+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				tok := tc.build(t, e)
				c, err := e.verify(domain.AccessToken, tok)
				if tc.ok {
					if err != nil || c.Subject != "user-1" {
						t.Fatalf("verify = %+v, %v; want accepted", c, err)
					}
					return
				}
				if !errors.Is(err, domain.ErrUnauthenticated) || domain.KindOf(err) != domain.KindUnauthenticated {
					t.Fatalf("verify = %+v, %v; want ErrUnauthenticated", c, err)
				}
				if tok != "" && strings.Contains(err.Error(), tok) {
					t.Fatal("the error quotes the token")
				}
				if _, err := e.verify(domain.RefreshToken, tok); !errors.Is(err, domain.ErrUnauthenticated) {
					t.Fatalf("as a refresh token: err = %v, want ErrUnauthenticated", err)
				}
			})
		}
	}
}

// The lifetime check follows the configured access TTL: every token the
// issuer signs passes (its times are whole seconds, rounded down, so a
// fractional TTL may give exp - iat one second above it), and a token one
// second longer than the TTL allows does not.
func TestAccessLifetimeFollowsTheConfiguredTTL(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{time.Second, 1500 * time.Millisecond, 90 * time.Second, time.Hour} {
		for _, e := range bothModes(t, func(o *josejwt.Options) { o.AccessTokenTTL = ttl }) {
			t.Run(e.name+" "+ttl.String(), func(t *testing.T) {
				t.Parallel()
				for _, offset := range []time.Duration{0, 100 * time.Millisecond, 600 * time.Millisecond, 999 * time.Millisecond} {
					e := *e
					now := e.clock.Now().Truncate(time.Second).Add(offset)
					c := domain.Claims{Kind: domain.AccessToken, Subject: "user-1", ID: "jti", FamilyID: "fam-1",
						IssuedAt: now, ExpiresAt: now.Add(ttl)}
					if _, err := e.verify(domain.AccessToken, e.issue(t, c)); err != nil {
						t.Fatalf("a token the issuer signed with the TTL (issued at +%v) is refused: %v", offset, err)
					}
				}
				limit := (ttl + time.Second - 1) / time.Second * time.Second
				long := e.signed(t, nil, func(m map[string]any) { m["exp"] = e.clock.Now().Add(limit + time.Second).Unix() })
				if _, err := e.verify(domain.AccessToken, long); !errors.Is(err, domain.ErrUnauthenticated) {
					t.Fatalf("a token living %v with a TTL of %v: err = %v, want unauthenticated", limit+time.Second, ttl, err)
				}
			})
		}
	}
}
