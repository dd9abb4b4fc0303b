package contract

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// ahForgeryTests: tokens the service did not issue, or issued as
// something else, never open a guarded route.
func ahForgeryTests(t *testing.T, s *ahSuite) {
	t.Run("forged and misused tokens are 401", func(t *testing.T) {
		t.Parallel()
		a, b := s.user(t, true), s.user(t, true)
		pa := s.login(t, a)
		s.wantAccepted(t, pa.Access, "the genuine token")
		parts := strings.Split(pa.Access, ".")
		header, claims := ahDecode(t, pa.Access)
		kid, _ := header["kid"].(string)
		typ, _ := header["typ"].(string)
		withHeader := func(change func(h map[string]any)) string {
			h := map[string]any{}
			for k, v := range header {
				h[k] = v
			}
			change(h)
			return ahSegment(h)
		}
		withClaims := func(change func(c map[string]any)) string {
			c := map[string]any{}
			for k, v := range claims {
				c[k] = v
			}
			change(c)
			return ahSegment(c)
		}
		attacker := ed25519.NewKeyFromSeed(ahSeed())
		attackerSign := func(h, c string) string {
			return h + "." + c + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(attacker, []byte(h+"."+c)))
		}
		hmacSign := func(key []byte, h, c string) string {
			return h + "." + c + "." + base64.RawURLEncoding.EncodeToString(ahHMAC(key, h+"."+c))
		}
		asB := withClaims(func(c map[string]any) { c["sub"] = b.ID })
		later := withClaims(func(c map[string]any) { c["exp"] = time.Now().Add(domain.Year).Unix() })

		forged := []struct{ name, token string }{
			{"a refresh token as the bearer", pa.Refresh},
			{"the payload changed to another subject", parts[0] + "." + asB + "." + parts[2]},
			{"the payload changed to a later expiry", parts[0] + "." + later + "." + parts[2]},
			{"the signature altered", parts[0] + "." + parts[1] + "." + ahFlip(parts[2])},
			{"the signature truncated", parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])/2]},
			{"the signature removed", parts[0] + "." + parts[1] + "."},
			{"the kid changed", withHeader(func(h map[string]any) { h["kid"] = "other-" + ahRandom(4) }) + "." + parts[1] + "." + parts[2]},
			{"the typ changed to refresh", withHeader(func(h map[string]any) { h["typ"] = "refresh+jwt" }) + "." + parts[1] + "." + parts[2]},
			{"a foreign key with the service's kid", attackerSign(parts[0], asB)},
			{"a foreign key with its own kid", attackerSign(withHeader(func(h map[string]any) { h["kid"] = "attacker" }), asB)},
			{"a foreign key embedded as jwk", attackerSign(withHeader(func(h map[string]any) {
				h["jwk"] = map[string]any{"kty": "OKP", "crv": "Ed25519",
					"x": base64.RawURLEncoding.EncodeToString(attacker.Public().(ed25519.PublicKey))}
			}), asB)},
			{"HS256 with a guessed secret", hmacSign([]byte("secret"), withHeader(func(h map[string]any) { h["alg"] = "HS256" }), asB)},
			{"HS256 with an empty secret", hmacSign(nil, withHeader(func(h map[string]any) { h["alg"] = "HS256" }), asB)},
			{"five segments, as a JWE", pa.Access + ".x.y"},
			{"two segments", parts[0] + "." + parts[1]},
			{"garbage", "not-a-token"},
			{"garbage in three segments", "a.b.c"},
		}
		for _, alg := range []string{"none", "None", "NONE", "nOnE"} {
			h := withHeader(func(h map[string]any) { h["alg"] = alg })
			forged = append(forged,
				struct{ name, token string }{"alg " + alg + " without a signature", h + "." + asB + "."},
				struct{ name, token string }{"alg " + alg + " with the original signature", h + "." + parts[1] + "." + parts[2]})
		}
		if header["alg"] == "EdDSA" {
			// The algorithm-confusion attack: HMAC keyed with the public
			// key, which anyone reads from the JWKS.
			k := ahJWKByKid(s.jwks(t), kid)
			if k == nil {
				t.Fatalf("the JWKS does not list kid %q", kid)
			}
			x, _ := k["x"].(string)
			raw, _ := base64.RawURLEncoding.DecodeString(x)
			jwk, _ := json.Marshal(k)
			hs := withHeader(func(h map[string]any) { h["alg"] = "HS256" })
			for name, key := range map[string][]byte{"raw": raw, "base64url": []byte(x), "JWK JSON": jwk} {
				forged = append(forged, struct{ name, token string }{
					"HS256 keyed with the public key (" + name + ")", hmacSign(key, hs, asB)})
			}
		}
		for _, f := range forged {
			s.wantRefused(t, f.token, f.name)
		}
		if typ == "" {
			t.Error("the genuine token has no typ header")
		}
		s.wantAccepted(t, pa.Access, "the genuine token after the forgeries")
	})
}

// ahClaimsTests: tokens signed with the service's own key but carrying
// claims it must refuse. They need the harness's SigningKey.
func ahClaimsTests(t *testing.T, s *ahSuite) {
	t.Run("correctly signed tokens with bad claims are 401", func(t *testing.T) {
		t.Parallel()
		if s.target.SigningKey == nil {
			t.Skip("the harness does not expose the signing key")
		}
		u := s.user(t, true)
		off := s.user(t, false)
		key := s.target.SigningKey(t)
		if key.Algorithm == "HS256" && key.ID == "" {
			key.ID = ahKid(t, s.login(t, u).Access)
		}
		sign := func(typ string, change func(c map[string]any)) string {
			// What the service issues: a session id, the access lifetime,
			// its client_id (RFC 9068; refused by name below).
			c := ahClaims(u.ID, s.cfg.AccessTTL)
			c["sid"] = webUUID()
			c["client_id"] = "cachegate"
			if change != nil {
				change(c)
			}
			tok, err := SignJWT(key, typ, c)
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		// The control: the same construction with good claims opens the
		// route, so every refusal below is about its one change.
		s.wantAccepted(t, sign("at+jwt", nil), "a token signed with the service's key")
		now := time.Now()
		for _, c := range []struct {
			name  string
			typ   string
			claim func(c map[string]any)
		}{
			{"a wrong issuer", "at+jwt", func(c map[string]any) { c["iss"] = "someone-else" }},
			{"no issuer", "at+jwt", func(c map[string]any) { delete(c, "iss") }},
			{"a wrong audience", "at+jwt", func(c map[string]any) { c["aud"] = "another-service" }},
			{"an audience list without the service", "at+jwt", func(c map[string]any) { c["aud"] = []string{"a", "b"} }},
			{"no audience", "at+jwt", func(c map[string]any) { delete(c, "aud") }},
			{"expired an hour ago", "at+jwt", func(c map[string]any) {
				c["iat"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
			}},
			{"expired 10 s ago, beyond the leeway", "at+jwt", func(c map[string]any) {
				c["iat"], c["exp"] = now.Add(-time.Minute).Unix(), now.Add(-10*time.Second).Unix()
			}},
			{"issued an hour in the future", "at+jwt", func(c map[string]any) {
				c["iat"], c["exp"] = now.Add(time.Hour).Unix(), now.Add(2*time.Hour).Unix()
			}},
			{"not valid before an hour from now", "at+jwt", func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() }},
			{"no expiry", "at+jwt", func(c map[string]any) { delete(c, "exp") }},
			{"no session id (sid)", "at+jwt", func(c map[string]any) { delete(c, "sid") }},
			{"no client_id", "at+jwt", func(c map[string]any) { delete(c, "client_id") }},
			{"another client_id", "at+jwt", func(c map[string]any) { c["client_id"] = "another-app" }},
			{"a lifetime of 7 days, as a stolen key could sign", "at+jwt", func(c map[string]any) {
				c["exp"] = now.Add(7 * domain.Day).Unix()
			}},
			{"a lifetime of the access TTL and a second", "at+jwt", func(c map[string]any) {
				c["exp"] = c["iat"].(int64) + int64((s.cfg.AccessTTL+time.Second-1)/time.Second) + 1
			}},
			{"no subject", "at+jwt", func(c map[string]any) { delete(c, "sub") }},
			{"an unknown subject", "at+jwt", func(c map[string]any) { c["sub"] = webUUID() }},
			{"an inactive user's subject", "at+jwt", func(c map[string]any) { c["sub"] = off.ID }},
			{"a subject that is not a UUID", "at+jwt", func(c map[string]any) { c["sub"] = u.Name }},
			{"the refresh typ", "refresh+jwt", nil},
			{"a plain JWT typ", "JWT", nil},
			{"no typ", "", nil},
		} {
			s.wantRefused(t, sign(c.typ, c.claim), c.name)
		}
		// A service-signed access token is no refresh token either, and a
		// refresh token it never issued (no stored record) is refused.
		ahWantUnauthorized(t, s.tryRefresh(t, sign("at+jwt", nil)), false)
		ahWantUnauthorized(t, s.tryRefresh(t, sign("refresh+jwt", nil)), false)
		ahWantUnauthorized(t, s.tryRefresh(t, sign("refresh+jwt", func(c map[string]any) {
			c["iat"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
		})), false)
	})
}

// ahFlip changes one character in the middle of a base64url segment, so
// the decoded bytes differ while the text stays canonical.
func ahFlip(seg string) string {
	b := []byte(seg)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func ahSeed() []byte {
	b := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(b)
	return b
}
