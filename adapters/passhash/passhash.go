package passhash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Algorithm names a password hashing algorithm.
type Algorithm string

// The supported algorithms.
const (
	Bcrypt   Algorithm = "bcrypt"
	Argon2id Algorithm = "argon2id"
)

// ErrUnknownFormat is returned (wrapped) by Validate for a stored hash that
// is neither bcrypt nor argon2id. Its message never contains the hash.
var ErrUnknownFormat = errors.New("passhash: unknown password hash format")

// ErrMalformedHash is returned (wrapped) by Validate for a stored hash of a
// known algorithm that does not parse or whose parameters are out of
// bounds. Its message names the problem, never the hash.
var ErrMalformedHash = errors.New("passhash: malformed password hash")

// maxEncodedLen bounds a stored hash before it is parsed; real ones are
// 60 (bcrypt) to about 230 (argon2id with 64-byte salt and key) bytes.
const maxEncodedLen = 512

// Options configures a Hasher. Zero fields take the defaults.
type Options struct {
	// Algorithm new hashes use: Bcrypt (the default) or Argon2id.
	Algorithm Algorithm
	// BcryptCost is the bcrypt work factor, MinBcryptCost..MaxBcryptCost;
	// DefaultBcryptCost when zero. Tests use MinBcryptCost to stay fast.
	BcryptCost int
	// Argon2 holds the argon2id parameters; zero fields take the values of
	// DefaultArgon2Params.
	Argon2 Argon2Params
}

// Hasher hashes passwords with the configured algorithm and verifies
// bcrypt and argon2id hashes. It is safe for concurrent use.
type Hasher struct {
	alg        Algorithm
	bcryptCost int
	argon2     Argon2Params
	timing     timing
	// argon2Key is argon2.IDKey; a test's stand-in counts the work.
	argon2Key keyFunc
}

var (
	_ ports.PasswordHasher    = (*Hasher)(nil)
	_ ports.PasswordValidator = (*Hasher)(nil)
)

// New validates opts, fills in defaults and returns a Hasher. Every
// problem with opts is reported at once (errors.Join).
func New(opts Options) (*Hasher, error) {
	h := &Hasher{alg: cmp.Or(opts.Algorithm, Bcrypt), bcryptCost: cmp.Or(opts.BcryptCost, DefaultBcryptCost),
		argon2: opts.Argon2.withDefaults(), argon2Key: argon2.IDKey}
	var problems []error
	if h.alg != Bcrypt && h.alg != Argon2id {
		problems = append(problems, fmt.Errorf("algorithm %q: must be %q or %q", h.alg, Bcrypt, Argon2id))
	}
	if h.bcryptCost < MinBcryptCost || h.bcryptCost > MaxBcryptCost {
		problems = append(problems, fmt.Errorf("bcrypt cost %d: must be %d..%d", h.bcryptCost, MinBcryptCost, MaxBcryptCost))
	}
	if err := h.argon2.check(); err != nil {
		problems = append(problems, fmt.Errorf("argon2id: %w", err))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("passhash: invalid options: %w", err)
	}
	return h, nil
}

// Algorithm returns the algorithm new hashes use.
func (h *Hasher) Algorithm() Algorithm { return h.alg }

// Hash returns the encoded hash of password with the configured algorithm
// and an empty salt: both algorithms embed their salt in the hash.
//
// A password longer than domain.MaxPasswordBytes, or longer than 72 bytes
// with bcrypt (which would silently ignore the rest), is refused with a
// domain validation error on field "password". Length minimums are the
// caller's rule (domain.ValidatePassword), not this adapter's.
func (h *Hasher) Hash(ctx context.Context, password string) (hash, salt string, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", fmt.Errorf("hash password: %w", err)
	}
	if len(password) > domain.MaxPasswordBytes {
		return "", "", domain.InvalidField("password", "must be at most 1024 bytes")
	}
	start := time.Now()
	switch h.alg {
	case Argon2id:
		hash, err = hashArgon2id(password, h.argon2, h.argon2Key)
	default:
		if len(password) > maxBcryptPasswordBytes {
			return "", "", domain.InvalidField("password", "must be at most 72 bytes with bcrypt")
		}
		hash, err = hashBcrypt(password, h.bcryptCost)
	}
	if err != nil {
		return "", "", fmt.Errorf("hash password: %w", err)
	}
	h.timing.observe(time.Since(start))
	return hash, "", nil
}

// Validate reports whether in.Password matches in.PasswordHash, whichever
// of bcrypt ($2a$, $2b$, $2y$) or argon2id the hash is, comparing in
// constant time. in.PasswordSalt is ignored: the bcrypt hash embeds the
// salt the NestJS modules also store apart.
//
// An empty hash (a user without a password) matches nothing and is not an
// error. A password that could not have been hashed (over 72 bytes with
// bcrypt, over domain.MaxPasswordBytes with argon2id) does not match. A
// hash in another format is an error wrapping ErrUnknownFormat; one that
// does not parse or whose cost is out of bounds (bcrypt above max(16, the
// configured cost); argon2id as listed on Argon2Params) wraps
// ErrMalformedHash. A cancelled ctx is an error before any work.
func (h *Hasher) Validate(ctx context.Context, in ports.PasswordCheck) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("validate password: %w", err)
	}
	var (
		ok    bool
		err   error
		start = time.Now()
	)
	switch detect(in.PasswordHash) {
	case "": // matches nothing, in the time of a failed check
	case Bcrypt:
		ok, err = verifyBcrypt(in.PasswordHash, in.Password, h.bcryptVerifyLimit())
	case Argon2id:
		ok, err = verifyArgon2id(in.PasswordHash, in.Password, h.argon2Key)
	default:
		err = ErrUnknownFormat
	}
	if err != nil {
		return false, fmt.Errorf("validate password: %w", err)
	}
	if len(in.Password) > h.maxPasswordBytes() {
		// A check at the setting computes nothing for this password, nor
		// does an unknown user's (equaltime.go): nothing to measure or pad.
		return ok, nil
	}
	switch elapsed := time.Since(start); h.strength(in.PasswordHash) {
	case 0:
		h.timing.observe(elapsed)
	case -1:
		if !ok {
			h.padFailure(ctx, in.PasswordHash, in.Password, elapsed) // equaltime.go
		}
	}
	return ok, nil
}

// ValidateObject is Validate against u's stored hash and salt.
func (h *Hasher) ValidateObject(ctx context.Context, password string, u domain.User) (bool, error) {
	return h.Validate(ctx, ports.PasswordCheck{Password: password, PasswordHash: u.PasswordHash, PasswordSalt: u.PasswordSalt})
}

// NeedsRehash reports whether hash should be replaced by a new hash: it is
// of another algorithm than the configured one, a bcrypt hash of lower
// cost, or an argon2id hash with less memory, fewer iterations or a
// shorter salt or key than configured. Parallelism does not count: it
// changes how the work is spread, not how much there is. A stronger hash
// is kept, never downgraded. A hash that does not parse reports true; it
// cannot have validated anyway.
func (h *Hasher) NeedsRehash(hash string) bool {
	if detect(hash) != h.alg {
		return true
	}
	switch h.alg {
	case Argon2id:
		a, err := parseArgon2id(hash)
		if err != nil {
			return true
		}
		return a.params.weakerThan(h.argon2)
	default:
		cost, err := parseBcrypt(hash, h.bcryptVerifyLimit())
		return err != nil || cost < h.bcryptCost
	}
}

// unknownAlgorithm is what detect calls a hash of an unsupported format.
const unknownAlgorithm Algorithm = "unknown"

// detect names the algorithm of an encoded hash from its prefix: "" for
// an empty hash, unknownAlgorithm for an unsupported one.
func detect(hash string) Algorithm {
	switch {
	case hash == "":
		return ""
	case isBcryptPrefix(hash):
		return Bcrypt
	case len(hash) > len(argon2idPrefix) && hash[:len(argon2idPrefix)] == argon2idPrefix:
		return Argon2id
	default:
		return unknownAlgorithm
	}
}

// malformed wraps ErrMalformedHash with the algorithm and a fixed reason.
func malformed(alg Algorithm, reason string) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformedHash, alg, reason)
}
