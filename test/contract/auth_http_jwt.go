package contract

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// ahKid returns the kid header of token.
func ahKid(t *testing.T, token string) string {
	t.Helper()
	h, _ := ahDecode(t, token)
	kid, _ := h["kid"].(string)
	return kid
}

// ahJWKByKid returns the key of keys with kid, or nil.
func ahJWKByKid(keys []map[string]any, kid string) map[string]any {
	for _, k := range keys {
		if k["kid"] == kid {
			return k
		}
	}
	return nil
}

// ahDecode decodes a compact JWS's header and claims without checking its
// signature. It fails the test (without quoting the token) when token is
// not one.
func ahDecode(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("a token of %d bytes has %d segments, want 3", len(token), len(parts))
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err == nil {
			err = json.Unmarshal(b, dst)
		}
		if err != nil {
			t.Fatalf("segment %d of a token is not base64url JSON: %v", i, err)
		}
	}
	return header, claims
}

// ahSegment encodes v as a base64url JSON segment.
func ahSegment(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// SignJWT signs claims as a compact JWS with key (EdDSA with the Ed25519
// seed in key.Private, or HS256 with the secret), writing the typ header
// (omitted when empty) and key.ID as kid (omitted when empty). It is
// exported for harnesses that mint tokens with a service's key.
func SignJWT(key domain.SigningKey, typ string, claims map[string]any) (string, error) {
	header := map[string]any{"alg": key.Algorithm}
	if typ != "" {
		header["typ"] = typ
	}
	if key.ID != "" {
		header["kid"] = key.ID
	}
	input := ahSegment(header) + "." + ahSegment(claims)
	var sig []byte
	switch key.Algorithm {
	case "EdDSA":
		if len(key.Private) != ed25519.SeedSize {
			return "", fmt.Errorf("an EdDSA key needs a %d-byte seed, not %d bytes", ed25519.SeedSize, len(key.Private))
		}
		sig = ed25519.Sign(ed25519.NewKeyFromSeed(key.Private), []byte(input))
	case "HS256":
		if len(key.Private) == 0 {
			return "", errors.New("an HS256 key needs a secret")
		}
		sig = ahHMAC(key.Private, input)
	default:
		return "", fmt.Errorf("unknown algorithm %q", key.Algorithm)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func ahHMAC(key []byte, input string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(input))
	return m.Sum(nil)
}

// ahClaims returns valid-looking claims for sub, issued now, living d.
func ahClaims(sub string, d time.Duration) map[string]any {
	now := time.Now().Unix()
	return map[string]any{"iss": "cachegate", "aud": "cachegate", "sub": sub, "jti": webUUID(),
		"iat": now, "exp": now + int64(d/time.Second)}
}

// ahAudience reports whether an aud claim (a string or an array) names want.
func ahAudience(aud any, want string) bool {
	switch v := aud.(type) {
	case string:
		return v == want
	case []any:
		for _, a := range v {
			if a == want {
				return true
			}
		}
	}
	return false
}

func ahKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ahRandom returns n random bytes as lower-case hex.
func ahRandom(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
