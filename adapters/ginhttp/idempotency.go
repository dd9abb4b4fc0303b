package ginhttp

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// idempotencyHeader is the request header of the IETF draft "The
// Idempotency-Key HTTP Header Field" (README, "Idempotent retries").
const idempotencyHeader = "Idempotency-Key"

// errIdempotencyKey is a malformed Idempotency-Key header.
var errIdempotencyKey = domain.InvalidField(idempotencyHeader,
	"must be one quoted string (\"…\") or one token of visible ASCII characters, 1 to 255 bytes")

// idempotencyKey parses the Idempotency-Key header of h: nil when it is
// absent. It is an RFC 8941 string or, as clients send it, a bare token
// (docs/api.md, "Idempotent retries"); anything else is a 400.
func idempotencyKey(h http.Header) (*application.IdempotencyKey, error) {
	lines := h.Values(idempotencyHeader)
	switch len(lines) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, errIdempotencyKey
	}
	v := strings.Trim(lines[0], " \t")
	key, ok := parseSFString(v)
	if !ok {
		key, ok = parseBareKey(v)
	}
	if !ok || key == "" || len(key) > application.MaxIdempotencyKeyBytes {
		return nil, errIdempotencyKey
	}
	return &application.IdempotencyKey{Key: key}, nil
}

// parseSFString unquotes an RFC 8941 sf-string; ok is false when v is not
// one.
func parseSFString(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			i++
			if i >= len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", false
			}
			b.WriteByte(v[i])
		case c == '"':
			return b.String(), i == len(v)-1
		case c < 0x20 || c > 0x7e:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// parseBareKey accepts a key sent without quotes: visible ASCII, no
// quote, backslash or comma (which would make it look like a list).
func parseBareKey(v string) (string, bool) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= 0x20 || c > 0x7e || c == '"' || c == '\\' || c == ',' {
			return "", false
		}
	}
	return v, true
}

// bodyHash identifies a request body as received: the hex SHA-256 of its
// bytes. A retry must send the same bytes, not only the same JSON value.
func bodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}
