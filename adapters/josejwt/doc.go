// Package josejwt issues and verifies cachegate's JSON Web Tokens with
// go-jose v4. It implements ports.TokenIssuer and ports.TokenVerifier.
//
// Tokens are compact JWS objects signed with EdDSA (Ed25519) by default,
// with keys kept in a ports.KeyStore so every replica and every restart
// agrees, or with HS256 and a configured secret for compatibility. Each
// token carries sub, iat, exp, iss, aud, jti and the private claim "fam"
// (the refresh family), and a "kid" and a "typ" header: "at+jwt" for
// access tokens, "refresh+jwt" for refresh tokens. Verification demands
// the typ of the kind asked for, so neither kind stands in for the other.
//
// The application decides lifetimes: it passes domain.Claims with IssuedAt
// and ExpiresAt set, and the issuer signs exactly those (as whole seconds,
// rounded down, as JWT NumericDates are).
package josejwt
