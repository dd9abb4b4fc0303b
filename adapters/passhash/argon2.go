package passhash

import (
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cachegate/cachegate/domain"
	"golang.org/x/crypto/argon2"
)

// Argon2Params are the argon2id parameters. New refuses, and Validate
// treats as malformed, values outside these bounds:
//
//	Memory       8×Parallelism .. 1 GiB (1048576 KiB)
//	Iterations   1 .. 20, and Memory×Iterations at most 4 GiB (4194304 KiB)
//	Parallelism  1 .. 16
//	SaltLength   8 .. 64 bytes
//	KeyLength    16 .. 64 bytes
//
// so that a stored hash can never make a login allocate or compute much
// more than a generous configuration would.
type Argon2Params struct {
	// Memory in KiB.
	Memory      uint32
	Iterations  uint32
	Parallelism uint8
	SaltLength  uint32
	KeyLength   uint32
}

// DefaultArgon2Params returns OWASP's recommended argon2id setting
// (19 MiB, 2 iterations, 1 lane) with a 16-byte salt and a 32-byte key.
func DefaultArgon2Params() Argon2Params {
	return Argon2Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}
}

const (
	argon2idPrefix       = "$argon2id$"
	maxArgon2Memory      = 1 << 20 // KiB
	maxArgon2Iterations  = 20
	maxArgon2Work        = 1 << 22 // KiB × iterations
	maxArgon2Parallelism = 16
	minArgon2Salt        = 8
	maxArgon2Salt        = 64
	minArgon2Key         = 16
	maxArgon2Key         = 64
)

var argon2B64 = base64.RawStdEncoding.Strict()

func (p Argon2Params) withDefaults() Argon2Params {
	d := DefaultArgon2Params()
	p.Memory = cmp.Or(p.Memory, d.Memory)
	p.Iterations = cmp.Or(p.Iterations, d.Iterations)
	p.Parallelism = cmp.Or(p.Parallelism, d.Parallelism)
	p.SaltLength = cmp.Or(p.SaltLength, d.SaltLength)
	p.KeyLength = cmp.Or(p.KeyLength, d.KeyLength)
	return p
}

// check returns every way p is out of bounds, joined.
func (p Argon2Params) check() error {
	var problems []error
	if p.Parallelism < 1 || p.Parallelism > maxArgon2Parallelism {
		problems = append(problems, fmt.Errorf("parallelism %d: must be 1..%d", p.Parallelism, maxArgon2Parallelism))
	}
	if p.Memory < 8*uint32(p.Parallelism) || p.Memory > maxArgon2Memory {
		problems = append(problems, fmt.Errorf("memory %d KiB: must be 8×parallelism..%d", p.Memory, maxArgon2Memory))
	}
	if p.Iterations < 1 || p.Iterations > maxArgon2Iterations {
		problems = append(problems, fmt.Errorf("iterations %d: must be 1..%d", p.Iterations, maxArgon2Iterations))
	} else if uint64(p.Memory)*uint64(p.Iterations) > maxArgon2Work {
		problems = append(problems, fmt.Errorf("memory×iterations %d: must be at most %d", uint64(p.Memory)*uint64(p.Iterations), maxArgon2Work))
	}
	if p.SaltLength < minArgon2Salt || p.SaltLength > maxArgon2Salt {
		problems = append(problems, fmt.Errorf("salt length %d: must be %d..%d", p.SaltLength, minArgon2Salt, maxArgon2Salt))
	}
	if p.KeyLength < minArgon2Key || p.KeyLength > maxArgon2Key {
		problems = append(problems, fmt.Errorf("key length %d: must be %d..%d", p.KeyLength, minArgon2Key, maxArgon2Key))
	}
	return errors.Join(problems...)
}

// weakerThan reports whether p costs an attacker less than want.
func (p Argon2Params) weakerThan(want Argon2Params) bool {
	return p.Memory < want.Memory || p.Iterations < want.Iterations ||
		p.SaltLength < want.SaltLength || p.KeyLength < want.KeyLength
}

// argon2Hash is a parsed PHC string.
type argon2Hash struct {
	params Argon2Params
	salt   []byte
	key    []byte
}

// parseArgon2id parses "$argon2id$v=19$m=M,t=T,p=P$salt$key" (unpadded
// standard base64, parameters in that order, no optional fields), checking
// every bound before decoding anything large.
func parseArgon2id(s string) (argon2Hash, error) {
	if len(s) > maxEncodedLen {
		return argon2Hash{}, malformed(Argon2id, "too long")
	}
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return argon2Hash{}, malformed(Argon2id, "not $argon2id$v=…$m=…,t=…,p=…$salt$key")
	}
	if parts[2] != "v=19" {
		return argon2Hash{}, malformed(Argon2id, "version is not 19")
	}
	var a argon2Hash
	fields := strings.Split(parts[3], ",")
	if len(fields) != 3 {
		return argon2Hash{}, malformed(Argon2id, "parameters are not m,t,p")
	}
	m, err1 := parseParam(fields[0], "m=", 32)
	t, err2 := parseParam(fields[1], "t=", 32)
	p, err3 := parseParam(fields[2], "p=", 8)
	if errors.Join(err1, err2, err3) != nil {
		return argon2Hash{}, malformed(Argon2id, "parameters are not m,t,p numbers")
	}
	a.params = Argon2Params{Memory: uint32(m), Iterations: uint32(t), Parallelism: uint8(p)}
	// Encoded lengths first, so the decoders never see a long input.
	if l := len(parts[4]); l < argon2B64.EncodedLen(minArgon2Salt) || l > argon2B64.EncodedLen(maxArgon2Salt) {
		return argon2Hash{}, malformed(Argon2id, "salt length out of bounds")
	}
	if l := len(parts[5]); l < argon2B64.EncodedLen(minArgon2Key) || l > argon2B64.EncodedLen(maxArgon2Key) {
		return argon2Hash{}, malformed(Argon2id, "key length out of bounds")
	}
	var err error
	if a.salt, err = argon2B64.DecodeString(parts[4]); err != nil {
		return argon2Hash{}, malformed(Argon2id, "salt is not unpadded base64")
	}
	if a.key, err = argon2B64.DecodeString(parts[5]); err != nil {
		return argon2Hash{}, malformed(Argon2id, "key is not unpadded base64")
	}
	a.params.SaltLength, a.params.KeyLength = uint32(len(a.salt)), uint32(len(a.key))
	if err := a.params.check(); err != nil {
		return argon2Hash{}, fmt.Errorf("%w: %s: %w", ErrMalformedHash, Argon2id, err)
	}
	return a, nil
}

// parseParam parses "<name><decimal>" into at most bits bits.
func parseParam(field, name string, bits int) (uint64, error) {
	digits, ok := strings.CutPrefix(field, name)
	if !ok || digits == "" || len(digits) > 10 {
		return 0, errors.New("bad parameter")
	}
	return strconv.ParseUint(digits, 10, bits)
}

// keyFunc derives an argon2id key (Hasher.argon2Key).
type keyFunc func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte

func hashArgon2id(password string, p Argon2Params, idKey keyFunc) (string, error) {
	salt := make([]byte, p.SaltLength)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("argon2id salt: %w", err)
	}
	key := idKey([]byte(password), salt, p.Iterations, p.Memory, p.Parallelism, p.KeyLength)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Iterations, p.Parallelism,
		argon2B64.EncodeToString(salt), argon2B64.EncodeToString(key)), nil
}

// verifyArgon2id recomputes the key of password with the hash's own
// parameters and compares in constant time.
func verifyArgon2id(hash, password string, idKey keyFunc) (bool, error) {
	a, err := parseArgon2id(hash)
	if err != nil {
		return false, err
	}
	if len(password) > domain.MaxPasswordBytes {
		return false, nil
	}
	key := idKey([]byte(password), a.salt, a.params.Iterations, a.params.Memory, a.params.Parallelism, uint32(len(a.key)))
	return subtle.ConstantTimeCompare(key, a.key) == 1, nil
}
