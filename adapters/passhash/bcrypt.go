package passhash

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

// The bcrypt work factor range and default. A cost is log2 of the rounds.
const (
	MinBcryptCost     = bcrypt.MinCost // 4
	MaxBcryptCost     = bcrypt.MaxCost // 31
	DefaultBcryptCost = 10
)

// bcryptVerifyCost is the highest cost of a stored bcrypt hash Validate
// works on unless the configured cost is higher: each step doubles the
// work, and a corrupt row with cost 31 would take days.
const bcryptVerifyCost = 16

// maxBcryptPasswordBytes is how much of a password bcrypt reads.
const maxBcryptPasswordBytes = 72

// bcryptLen is the length of a modular-crypt bcrypt hash:
// "$2b$" + 2-digit cost + "$" + 22 salt + 31 hash characters.
const bcryptLen = 60

func (h *Hasher) bcryptVerifyLimit() int { return max(bcryptVerifyCost, h.bcryptCost) }

func isBcryptPrefix(s string) bool {
	return len(s) >= 4 && s[0] == '$' && s[1] == '2' && (s[2] == 'a' || s[2] == 'b' || s[2] == 'y') && s[3] == '$'
}

// parseBcrypt checks the shape of a bcrypt hash and returns its cost,
// refusing costs above maxCost.
func parseBcrypt(s string, maxCost int) (int, error) {
	if len(s) != bcryptLen || !isBcryptPrefix(s) || s[6] != '$' {
		return 0, malformed(Bcrypt, "not a 60-character $2a$/$2b$/$2y$ hash")
	}
	if !isDigit(s[4]) || !isDigit(s[5]) {
		return 0, malformed(Bcrypt, "cost is not two digits")
	}
	cost := int(s[4]-'0')*10 + int(s[5]-'0')
	if cost < MinBcryptCost || cost > maxCost {
		return 0, malformed(Bcrypt, fmt.Sprintf("cost %d outside %d..%d", cost, MinBcryptCost, maxCost))
	}
	for i := 7; i < bcryptLen; i++ {
		if !isBcryptBase64(s[i]) {
			return 0, malformed(Bcrypt, "salt or hash is not bcrypt base64")
		}
	}
	return cost, nil
}

func hashBcrypt(password string, cost int) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("bcrypt: %w", err)
	}
	return string(b), nil
}

// verifyBcrypt compares password with a bcrypt hash whose cost is at most
// maxCost. $2a$, $2b$ and $2y$ compute the same for passwords of at most
// 72 bytes, the only ones that can match.
func verifyBcrypt(hash, password string, maxCost int) (bool, error) {
	if _, err := parseBcrypt(hash, maxCost); err != nil {
		return false, err
	}
	if len(password) > maxBcryptPasswordBytes {
		return false, nil
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return false, nil
	default:
		return false, fmt.Errorf("%w: bcrypt: %w", ErrMalformedHash, err)
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isBcryptBase64 reports whether c is in bcrypt's base64 alphabet
// ("./A-Za-z0-9").
func isBcryptBase64(c byte) bool {
	return c == '.' || c == '/' || isDigit(c) || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}
