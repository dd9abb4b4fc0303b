// Package josejwt issues and verifies cachegate's JSON Web Tokens with
// go-jose v4. It implements ports.TokenIssuer and ports.TokenVerifier.
// The issuer writes the compact JWS itself, the bytes go-jose would write
// (keyring.go: signer), with EdDSA signatures from curve25519-voi, equal
// to crypto/ed25519's; verification is go-jose's.
//
// Tokens are compact JWS objects signed with EdDSA (Ed25519) by default,
// with keys kept in a ports.KeyStore so every replica and every restart
// agrees, or with HS256 and a configured secret for compatibility. Each
// token carries sub, iat, exp, iss, aud, jti, "sid" (the refresh family;
// refresh tokens signed before it read "fam"; an access token without sid
// is refused) and "auth_time" (the family's login),
// and a "kid" and a "typ" header: "at+jwt" for access tokens,
// "refresh+jwt" for refresh tokens. Verification demands the typ of the
// kind asked for, so neither kind stands in for the other. Access tokens
// add RFC 9068's client_id; refresh tokens carry the audience
// "<audience>:refresh" instead of the access audience, so that a generic
// verifier never takes one for an access token (README.md, "Tokens").
//
// A retired key verifies access tokens for AccessTokenTTL plus the leeway
// after its retirement and refresh tokens for MaxTokenTTL plus the leeway;
// a revoked key verifies nothing. Stored private keys may be sealed with a
// key encryption secret (sealing.go).
//
// The application decides lifetimes: it passes domain.Claims with IssuedAt
// and ExpiresAt set, and the issuer signs exactly those (as whole seconds,
// rounded down, as JWT NumericDates are). The verifier refuses an access
// token whose exp - iat exceeds AccessTokenTTL (rounded up to a second).
package josejwt
