package domain

import (
	"crypto/sha256"
	"crypto/subtle"
	"time"
	"unsafe"
)

// TokenKind tells access tokens from refresh tokens; neither can stand in
// for the other.
type TokenKind uint8

// The token kinds.
const (
	AccessToken TokenKind = iota + 1
	RefreshToken
)

// String returns "access" or "refresh".
func (k TokenKind) String() string {
	if k == RefreshToken {
		return "refresh"
	}
	return "access"
}

// Claims are the facts a token carries.
type Claims struct {
	Kind TokenKind
	// Subject is the user id (sub).
	Subject string
	// ID is the token's unique id (jti).
	ID string
	// FamilyID names the refresh family started by one login; carried by
	// both kinds so logout can find the caller's family.
	FamilyID  string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// SessionStart is when the login that started the family happened
	// (the auth_time claim); zero when the token does not say. A family
	// cannot be refreshed past SessionStart plus the session maximum.
	SessionStart time.Time
	// KeyID names the key that signed the token (its kid); set by the
	// verifier, empty when unknown.
	KeyID string
	// Admin is whether the user was an admin when the token was issued
	// (the claim roles: ["admin"], RolesOf), for clients only: the server
	// checks admin rights against the store and never reads it back.
	Admin bool
	// Digest, when set, says the claims were read from a refresh token
	// WITHOUT checking its signature (ports.RefreshTokenReader) and is that
	// token's TokenDigest: they prove nothing unless it equals the family's
	// live digest (RefreshFamily.Judge). Zero for verified claims.
	Digest Digest
}

// Digest is the SHA-256 digest of a token string (TokenDigest), as refresh
// families store their live token's: it matches the string issued and
// nothing else, and reveals nothing of it. The zero Digest is none.
type Digest [sha256.Size]byte

// TokenDigest returns the digest of token. It hashes the string's bytes
// in place, through a read-only view that Sum256 does not keep, so it
// allocates nothing (a copy of a 400-byte token was two of a refresh's
// allocations).
func TokenDigest(token string) Digest {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

// IsZero reports whether d is none.
func (d Digest) IsZero() bool { return d == Digest{} }

// Matches reports whether d is a digest and o the same, in time
// independent of where they differ.
func (d Digest) Matches(o Digest) bool {
	return !d.IsZero() && subtle.ConstantTimeCompare(d[:], o[:]) == 1
}

// RoleAdmin is the role of an admin (docs/admin.md).
const RoleAdmin = "admin"

// RolesOf returns the roles claim of a user: ["admin"] for an admin,
// none otherwise.
func RolesOf(admin bool) []string {
	if admin {
		return []string{RoleAdmin}
	}
	return nil
}

// TokenPair is the answer of login and refresh.
type TokenPair struct {
	AccessToken  string
	RefreshToken string
}

// RefreshRecord is the stored state of one issued refresh token.
type RefreshRecord struct {
	ID string // the token's jti
	// Digest is the TokenDigest of the token string issued; zero when
	// unknown (a token issued again, or imported).
	Digest    Digest
	FamilyID  string
	UserID    string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// UsedAt is set when the token was exchanged for its successor.
	UsedAt *time.Time
	// RevokedAt is set when the family was revoked.
	RevokedAt *time.Time
	// Address and UserAgent are the client's at the login or refresh that
	// issued the token (docs/admin.md, sessions); UserAgent cut to
	// MaxUserAgentLen.
	Address   string
	UserAgent string
}

// SigningKey is one token signing key as stored.
type SigningKey struct {
	ID        string // kid
	Algorithm string // "EdDSA" or "HS256"
	// Private is the key material (an Ed25519 seed or an HMAC secret).
	Private     []byte
	Public      []byte
	DateCreated time.Time
	// SignsFrom is when the key starts signing; until then it is only
	// published (it verifies, and the JWKS lists it). The zero time means
	// DateCreated (Activation). README.md, "Tokens".
	SignsFrom time.Time
	// RetiredAt is when the key stops signing (the next key's SignsFrom,
	// possibly ahead); from then on it only verifies, until its tokens
	// expire, and its Private is erased (empty).
	RetiredAt *time.Time
	// RevokedAt is set when the key was revoked: it verifies nothing any
	// more.
	RevokedAt *time.Time
}

// The states of a signing key at an instant, as `cachegate keys list`
// shows them.
const (
	// KeyPublished: in the JWKS and verifying, not signing yet.
	KeyPublished = "published"
	// KeySigning: the key new tokens are signed with.
	KeySigning = "signing"
	// KeyRetired: verifying only, until the tokens it signed expire.
	KeyRetired = "retired"
	// KeyRevoked: verifying nothing.
	KeyRevoked = "revoked"
)

// KeySetMaxAge is how long a client may keep the key set it fetched (the
// JWKS route's Cache-Control max-age); a key is published at least this
// long ahead of signing (README.md, "Signing keys").
const KeySetMaxAge = time.Minute

// Activation returns when k starts signing: SignsFrom, or DateCreated
// when SignsFrom is zero.
func (k SigningKey) Activation() time.Time {
	if k.SignsFrom.IsZero() {
		return k.DateCreated
	}
	return k.SignsFrom
}

// StateAt returns k's state at now: KeyRevoked, KeyRetired (its RetiredAt
// has passed), KeyPublished (its activation is ahead) or KeySigning.
func (k SigningKey) StateAt(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.RetiredAt != nil && !now.Before(*k.RetiredAt):
		return KeyRetired
	case now.Before(k.Activation()):
		return KeyPublished
	}
	return KeySigning
}
