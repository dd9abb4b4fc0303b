package josejwt

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

var (
	_ ports.TokenVerifier      = (*Verifier)(nil)
	_ ports.KeyRevocations     = (*Verifier)(nil)
	_ ports.RefreshTokenReader = (*Verifier)(nil)
)

// Verifier checks tokens against the keys of its Tokens; it implements
// ports.TokenVerifier. Get one from Tokens.Verifier.
//
// A token is valid when it is a compact JWS of at most MaxTokenLen bytes
// in canonical base64url, signed with the configured algorithm (no other
// is even parsed) by a known key, with the typ header of the kind asked
// for, the configured iss and aud, an exp not passed and an iat not in the
// future (both with the leeway), and a non-empty sub and jti. An access
// token must also name its session (sid) and live no longer than the
// configured AccessTokenTTL (exp - iat, see lifetimeOK) and carry the
// configured client_id (RFC 9068). A key published ahead of signing
// verifies no token presented before its activation or issued before it
// (verifyKey.signs). Every other
// input yields an error wrapping domain.ErrUnauthenticated that never
// quotes the token.
type Verifier struct{ t *Tokens }

// The reasons a token is refused; fixed values, so a refusal allocates
// nothing and carries no token text.
var (
	errMalformed  = unauthenticated("malformed token")
	errTooLong    = unauthenticated("token too long")
	errType       = unauthenticated("wrong token type")
	errUnknownKey = unauthenticated("unknown signing key")
	errSignature  = unauthenticated("invalid signature or claims")
	errIssuer     = unauthenticated("wrong issuer")
	errAudience   = unauthenticated("wrong audience")
	errExpired    = unauthenticated("token expired")
	errFuture     = unauthenticated("token issued in the future")
	errNotYet     = unauthenticated("token not valid yet")
	errClaims     = unauthenticated("token lacks a required claim")
	errLifetime   = unauthenticated("token lives longer than the access lifetime")
	errClientID   = unauthenticated("wrong client_id")
	errInactive   = unauthenticated("signing key not active when the token was issued")
)

func unauthenticated(reason string) error {
	return fmt.Errorf("josejwt: %s: %w", reason, domain.ErrUnauthenticated)
}

// AccessToken returns the claims of a valid access token, or an error
// wrapping domain.ErrUnauthenticated.
func (v *Verifier) AccessToken(ctx context.Context, token string) (domain.Claims, error) {
	return v.verify(ctx, domain.AccessToken, token, true)
}

// RefreshToken returns the claims of a valid refresh token, or an error
// wrapping domain.ErrUnauthenticated. Refresh tokens are never cached.
func (v *Verifier) RefreshToken(ctx context.Context, token string) (domain.Claims, error) {
	return v.verify(ctx, domain.RefreshToken, token, true)
}

// ReadRefreshToken implements ports.RefreshTokenReader: the claims of a
// refresh token that passes every check of RefreshToken except the
// signature's, which is not checked, with Digest set to the token's
// digest. Only a refresh store that holds that digest for the family's
// live token may act on them.
func (v *Verifier) ReadRefreshToken(ctx context.Context, token string) (domain.Claims, error) {
	c, err := v.verify(ctx, domain.RefreshToken, token, false)
	if err != nil {
		return domain.Claims{}, err
	}
	c.Digest = domain.TokenDigest(token)
	return c, nil
}

// parsedClaims is the JWT claims set as read.
type parsedClaims struct {
	jwt.Claims
	Session string `json:"sid"`
	// Family is where tokens signed before sid was introduced carry it.
	Family   string           `json:"fam"`
	AuthTime *jwt.NumericDate `json:"auth_time"`
	ClientID string           `json:"client_id"`
}

// verify checks token as a token of kind; without signed, every check but
// the signature's (ReadRefreshToken).
func (v *Verifier) verify(ctx context.Context, kind domain.TokenKind, token string, signed bool) (domain.Claims, error) {
	switch {
	case len(token) > MaxTokenLen:
		return domain.Claims{}, errTooLong
	case !canonical(token):
		return domain.Claims{}, errMalformed
	}
	t := v.t
	now := t.opts.Clock.Now()
	ring := t.keys(ctx, now)
	cache, window := t.cache, t.accessWindow
	if kind != domain.AccessToken {
		// Refresh tokens of a retired key keep working for their whole
		// life, so sessions survive a rotation; access tokens only for
		// the access lifetime (docs/api.md, "Tokens").
		cache, window = nil, t.window
	}
	if cache != nil {
		if e, ok := cache.get(token, now); ok && ring.lookup(e.kid, now, window) != nil {
			return e.claims, nil
		}
	}
	var pc parsedClaims
	k, err := readRefresh(ring, kind, token, signed, now, window, &pc)
	if err != nil {
		return domain.Claims{}, err
	}
	if k == nil {
		tok, err := jwt.ParseSigned(token, t.allow)
		if err != nil || len(tok.Headers) != 1 {
			return domain.Claims{}, errMalformed
		}
		h := tok.Headers[0]
		if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !typMatches(typ, kind) {
			return domain.Claims{}, errType
		}
		if h.KeyID == "" {
			return domain.Claims{}, errUnknownKey
		}
		if k = ring.lookup(h.KeyID, now, window); k == nil && ring.byKID[h.KeyID] == nil {
			k = t.keysForUnknownKID(ctx, now, h.KeyID).lookup(h.KeyID, now, window)
		}
		if k == nil {
			return domain.Claims{}, errUnknownKey
		}
		if signed {
			err = tok.Claims(k.key, &pc)
		} else {
			err = tok.UnsafeClaimsWithoutVerification(&pc)
		}
		if err != nil {
			return domain.Claims{}, errSignature
		}
	}
	c, err := t.validate(kind, &pc, now)
	if err != nil {
		return domain.Claims{}, err
	}
	if !k.signs(c.IssuedAt, now, t.opts.Leeway) {
		return domain.Claims{}, errInactive
	}
	c.KeyID = k.kid
	if cache != nil {
		cache.put(token, cacheEntry{claims: c, kid: k.kid, deadline: c.ExpiresAt.Add(t.opts.Leeway)}, now)
	}
	return c, nil
}

// readRefresh reads a refresh token unchecked whose header is, byte for
// byte, the signer's for a key of ring: that names the key, alg and typ
// go-jose would parse, so only the claims are decoded, as go-jose does.
// For any other token (or signed) it returns neither key nor error.
func readRefresh(ring *keyring, kind domain.TokenKind, token string, signed bool, now time.Time, window time.Duration,
	pc *parsedClaims) (*verifyKey, error) {
	if signed || kind != domain.RefreshToken {
		return nil, nil
	}
	head, rest, _ := strings.Cut(token, ".")
	k := ring.byRefreshHeader[head]
	if k == nil {
		return nil, nil
	}
	if !k.usable(now, window) {
		return nil, errUnknownKey
	}
	payload, _, _ := strings.Cut(rest, ".")
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || decodeClaims(b, pc) != nil {
		return nil, errMalformed
	}
	return k, nil
}

// validate checks the verified claims set at now and converts it.
func (t *Tokens) validate(kind domain.TokenKind, pc *parsedClaims, now time.Time) (domain.Claims, error) {
	leeway := t.opts.Leeway
	switch {
	case pc.Issuer != t.opts.Issuer:
		return domain.Claims{}, errIssuer
	case !t.audienceOK(kind, pc.Audience):
		return domain.Claims{}, errAudience
	case pc.Expiry == nil || pc.IssuedAt == nil || pc.Subject == "" || pc.ID == "":
		return domain.Claims{}, errClaims
	case !now.Before(pc.Expiry.Time().Add(leeway)):
		return domain.Claims{}, errExpired
	case pc.IssuedAt.Time().After(now.Add(leeway)):
		return domain.Claims{}, errFuture
	case pc.NotBefore != nil && pc.NotBefore.Time().After(now.Add(leeway)):
		return domain.Claims{}, errNotYet
	case kind == domain.AccessToken && pc.Session == "":
		// Without its session an access token could not be refused when
		// the session ends (logout, a disabled user): every token this
		// server issues names it (README.md, "Change feed").
		return domain.Claims{}, errClaims
	case kind == domain.AccessToken && !t.lifetimeOK(pc):
		return domain.Claims{}, errLifetime
	case kind == domain.AccessToken && pc.ClientID != t.opts.ClientID:
		// RFC 9068 2.2: every access token this server issues names
		// the configured client.
		return domain.Claims{}, errClientID
	}
	c := domain.Claims{
		Kind:      kind,
		Subject:   pc.Subject,
		ID:        pc.ID,
		FamilyID:  pc.Session,
		IssuedAt:  pc.IssuedAt.Time().UTC(),
		ExpiresAt: pc.Expiry.Time().UTC(),
	}
	if c.FamilyID == "" {
		c.FamilyID = pc.Family
	}
	if pc.AuthTime != nil {
		c.SessionStart = pc.AuthTime.Time().UTC()
	}
	return c, nil
}

// lifetimeOK reports whether an access token lives (exp - iat) no longer
// than AccessTokenTTL, rounded up to whole seconds (the issuer writes both
// times as whole seconds, rounded down, so a TTL of 1.5 s gives exp - iat
// of 1 or 2 s). No leeway: both times come from the issuing host's clock,
// so skew between hosts does not stretch their difference. A token forged
// with a stolen key and a far exp is refused; so is a token issued before
// AccessTokenTTL was lowered, which is what lowering it means
// (ARCHITECTURE.md, "Access-token lifetime and session id").
func (t *Tokens) lifetimeOK(pc *parsedClaims) bool {
	limit := int64((t.opts.AccessTokenTTL + time.Second - 1) / time.Second)
	return int64(*pc.Expiry)-int64(*pc.IssuedAt) <= limit
}

// KeyRevoked implements ports.KeyRevocations from the keys this process
// holds (reloaded every KeyReload): it never reads the store.
func (v *Verifier) KeyRevoked(kid string) bool {
	return kid != "" && v.t.ring.Load().revoked[kid]
}

// audienceOK reports whether aud names the audience of kind. A refresh
// token may also carry the access audience: refresh tokens signed before
// the refresh audience was introduced did, and they keep refreshing until
// they expire or are exchanged (README.md, "Tokens"); the typ header
// still tells them from access tokens here.
func (t *Tokens) audienceOK(kind domain.TokenKind, aud jwt.Audience) bool {
	if kind == domain.RefreshToken {
		return aud.Contains(t.refreshAudience) || aud.Contains(t.opts.Audience)
	}
	return aud.Contains(t.opts.Audience)
}

// typMatches reports whether the typ header names kind, compared
// case-insensitively and with an optional "application/" prefix (RFC 7515
// 4.1.9).
func typMatches(typ string, kind domain.TokenKind) bool {
	want := typAccess
	if kind == domain.RefreshToken {
		want = typRefresh
	}
	if len(typ) > len("application/") && strings.EqualFold(typ[:len("application/")], "application/") {
		typ = typ[len("application/"):]
	}
	return strings.EqualFold(typ, want)
}

// b64 maps each byte to its base64url value, or -1.
var b64 = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = int8(i)
	}
	return t
}()

// canonical reports whether s is three dot-separated segments of
// canonical unpadded base64url: no other characters (the decoder would
// skip newlines) and no stray bits in a segment's last character (the
// decoder would ignore them). So each token has exactly one spelling.
func canonical(s string) bool {
	dots, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if b64[s[i]] < 0 {
				return false
			}
			continue
		}
		if seg := s[start:i]; seg != "" {
			last := b64[seg[len(seg)-1]]
			switch len(seg) % 4 {
			case 1:
				return false
			case 2:
				if last&0x0f != 0 {
					return false
				}
			case 3:
				if last&0x03 != 0 {
					return false
				}
			}
		}
		if i < len(s) {
			dots++
		}
		start = i + 1
	}
	return dots == 2
}
