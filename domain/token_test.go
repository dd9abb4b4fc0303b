package domain_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

// TestTokenDigestIsTheSHA256OfTheString: the digest of a token is the
// SHA-256 of its bytes, the empty string's included, and taking it
// allocates nothing. Not parallel: AllocsPerRun counts the process's
// allocations.
func TestTokenDigestIsTheSHA256OfTheString(t *testing.T) {
	for _, tok := range []string{"", "a", strings.Repeat("eyJhbGciOiJFZERTQSJ9.", 20)} {
		if got, want := domain.TokenDigest(tok), domain.Digest(sha256.Sum256([]byte(tok))); got != want {
			t.Errorf("TokenDigest(%q) = %x, want %x", tok, got, want)
		}
	}
	tok := strings.Repeat("x", 420)
	if n := testing.AllocsPerRun(100, func() { _ = domain.TokenDigest(tok) }); n != 0 {
		t.Errorf("TokenDigest allocates %v times, want 0", n)
	}
}
