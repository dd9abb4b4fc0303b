package domain

import "time"

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
}

// TokenPair is the answer of login and refresh.
type TokenPair struct {
	AccessToken  string
	RefreshToken string
}

// RefreshRecord is the stored state of one issued refresh token.
type RefreshRecord struct {
	ID        string // the token's jti
	FamilyID  string
	UserID    string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// UsedAt is set when the token was exchanged for its successor.
	UsedAt *time.Time
	// RevokedAt is set when the family was revoked.
	RevokedAt *time.Time
}

// SigningKey is one token signing key as stored.
type SigningKey struct {
	ID        string // kid
	Algorithm string // "EdDSA" or "HS256"
	// Private is the key material (an Ed25519 seed or an HMAC secret).
	Private     []byte
	Public      []byte
	DateCreated time.Time
	// RetiredAt is set when another key became current; the key still
	// verifies tokens until they can no longer be valid. A retired key's
	// Private is erased (empty).
	RetiredAt *time.Time
	// RevokedAt is set when the key was revoked: it verifies nothing any
	// more.
	RevokedAt *time.Time
}

// The states of a signing key, as `cachegate keys list` shows them.
const (
	KeyCurrent = "current"
	KeyRetired = "retired"
	KeyRevoked = "revoked"
)

// State returns KeyRevoked, KeyRetired or KeyCurrent.
func (k SigningKey) State() string {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.RetiredAt != nil:
		return KeyRetired
	}
	return KeyCurrent
}
