package josejwt_test

import (
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

// Access tokens are RFC 9068 JWT access tokens: typ at+jwt and the claims
// iss, exp, aud, sub, client_id, iat and jti (section 2.2).
func TestAccessTokensCarryTheClaimsOfRFC9068(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, clientID, want string
	}{
		{"by default client_id is cachegate", "", "cachegate"},
		{"a configured client_id is written", "billing-app", "billing-app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, e := range bothModes(t, func(o *josejwt.Options) { o.ClientID = tc.clientID }) {
				tok := e.issue(t, e.claims(domain.AccessToken, time.Minute))
				if typ := header(t, tok)["typ"]; typ != "at+jwt" {
					t.Errorf("%s: typ %v, want at+jwt", e.name, typ)
				}
				p := segment(t, tok, 1)
				for _, k := range []string{"iss", "exp", "aud", "sub", "client_id", "iat", "jti"} {
					if _, ok := p[k]; !ok {
						t.Errorf("%s: the access token lacks %s (claims %v)", e.name, k, p)
					}
				}
				if p["client_id"] != tc.want {
					t.Errorf("%s: client_id %v, want %s", e.name, p["client_id"], tc.want)
				}
				if _, err := e.verify(domain.AccessToken, tok); err != nil {
					t.Errorf("%s: the verifier refuses its own access token: %v", e.name, err)
				}
				other := e.signed(t, nil, func(m map[string]any) { m["client_id"] = "other-" + tc.want })
				if _, err := e.verify(domain.AccessToken, other); !errors.Is(err, domain.ErrUnauthenticated) {
					t.Errorf("%s: an access token of another client_id: err = %v, want unauthenticated", e.name, err)
				}
			}
		})
	}
}

// Refresh tokens carry the audience "<audience>:refresh" and no client_id,
// so a generic JWT verifier that checks only signature, iss, aud and exp
// (PyJWT's recipe, jose without its typ option) refuses them as access
// tokens.
func TestAGenericVerifierRefusesARefreshTokenAsAnAccessToken(t *testing.T) {
	t.Parallel()
	e := newEdDSA(t, func(o *josejwt.Options) { o.Audience = "api.example" })
	refresh := e.issue(t, e.claims(domain.RefreshToken, time.Hour))
	access := e.issue(t, e.claims(domain.AccessToken, time.Hour))
	if p := segment(t, refresh, 1); p["aud"] != "api.example:refresh" || p["client_id"] != nil {
		t.Errorf("refresh token aud %v, client_id %v; want api.example:refresh and none", p["aud"], p["client_id"])
	}
	pub := e.key.(ed25519.PrivateKey).Public()
	generic := func(tok string) error {
		parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			return err
		}
		var c jwt.Claims
		if err := parsed.Claims(pub, &c); err != nil {
			return err
		}
		return c.ValidateWithLeeway(jwt.Expected{Issuer: "cachegate", AnyAudience: jwt.Audience{"api.example"},
			Time: e.clock.Now()}, 0)
	}
	if err := generic(access); err != nil {
		t.Fatalf("the control: a generic verifier refuses the access token: %v", err)
	}
	if err := generic(refresh); !errors.Is(err, jwt.ErrInvalidAudience) {
		t.Errorf("a generic verifier given the refresh token: %v, want ErrInvalidAudience", err)
	}
	if _, err := e.verify(domain.RefreshToken, refresh); err != nil {
		t.Errorf("the refresh path refuses its refresh token: %v", err)
	}
	if _, err := e.verify(domain.AccessToken, refresh); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("the access path given a refresh token: %v, want ErrUnauthenticated", err)
	}
	if _, err := e.verify(domain.RefreshToken, access); !errors.Is(err, domain.ErrUnauthenticated) {
		t.Errorf("the refresh path given an access token: %v, want ErrUnauthenticated", err)
	}
}

// A refresh token issued before the refresh audience existed carries the
// access audience: it still refreshes (sessions survive the upgrade), as a
// refresh token only (README.md, "Tokens").
func TestRefreshTokensOfTheAccessAudienceStillRefresh(t *testing.T) {
	t.Parallel()
	e := newEdDSA(t, nil)
	for _, tc := range []struct {
		name  string
		typ   string
		aud   any
		as    domain.TokenKind
		valid bool
	}{
		{"a refresh token of the access audience refreshes", "refresh+jwt", "cachegate", domain.RefreshToken, true},
		{"a refresh token of the refresh audience refreshes", "refresh+jwt", "cachegate:refresh", domain.RefreshToken, true},
		{"an access token of the refresh audience is refused", "at+jwt", "cachegate:refresh", domain.AccessToken, false},
		{"a refresh token of another audience is refused", "refresh+jwt", "other:refresh", domain.RefreshToken, false},
		{"an access token of the access audience is no refresh token", "at+jwt", "cachegate", domain.RefreshToken, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tok := forge(t, jose.EdDSA, e.key, map[string]any{"kid": e.kid, "typ": tc.typ},
				e.payloadJSON(t, func(m map[string]any) { m["aud"] = tc.aud }))
			_, err := e.verify(tc.as, tok)
			if tc.valid && err != nil {
				t.Errorf("verify: %v, want valid", err)
			}
			if !tc.valid && !errors.Is(err, domain.ErrUnauthenticated) {
				t.Errorf("verify: %v, want ErrUnauthenticated", err)
			}
		})
	}
}
