package josejwt

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	jose "github.com/go-jose/go-jose/v4"
	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"

	"github.com/cachegate/cachegate/domain"
)

// The token types written in the typ header.
const (
	typAccess  = "at+jwt"
	typRefresh = "refresh+jwt"
)

// algEdDSA and algHS256 are the algorithm names stored in
// domain.SigningKey.Algorithm.
const (
	algEdDSA = string(jose.EdDSA)
	algHS256 = string(jose.HS256)
)

// verifyKey is one key tokens may be verified with.
type verifyKey struct {
	kid string
	// key is an ed25519.PublicKey or an HMAC secret ([]byte).
	key any
	// from is when the key starts signing (zero: it always signed).
	from time.Time
	// retiredAt is zero while the key is current.
	retiredAt time.Time
}

// signer signs with the current key. It writes the compact JWS itself:
// the protected header of each token type is fixed per key, so it is
// encoded once, and a token is that header, the payload and the
// signature, base64url-encoded and joined by dots. The bytes are those
// go-jose writes for the same key and payload (its header is the JSON of
// alg, kid and typ, in that order; TestSignerWritesWhatGoJoseWrites), at
// a fraction of the allocations. Verification stays with go-jose.
type signer struct {
	kid string
	// from is when the key starts signing; until, when not zero, when it
	// stops (the next key's activation).
	from, until time.Time
	// access and refresh are the encoded headers, each followed by ".".
	access, refresh string
	// sign returns the signature of a signing input.
	sign func(input []byte) []byte
}

// compact returns the token of payload under the encoded header h.
func (s *signer) compact(h string, payload []byte) string {
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(h)+enc.EncodedLen(len(payload))+1+enc.EncodedLen(ed25519.SignatureSize))
	buf = append(buf, h...)
	buf = enc.AppendEncode(buf, payload)
	sig := s.sign(buf)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	// buf is sized for the whole token and not kept: the string takes it
	// over instead of copying it.
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// keyring is an immutable snapshot of the keys; Tokens swaps whole
// snapshots on reload, so readers never lock.
type keyring struct {
	byKID map[string]*verifyKey
	// byRefreshHeader maps the encoded protected header the signer writes
	// on a refresh token of each key (without its dot) to the key, so
	// that reading one of them unchecked decodes no header (readRefresh).
	byRefreshHeader map[string]*verifyKey
	// revoked names the revoked keys: they verify nothing, and a token
	// naming one causes no reload.
	revoked map[string]bool
	// plain names the signers whose private half is stored in clear
	// although a key encryption secret is configured (reloadLocked
	// replaces them).
	plain []string
	// ordered lists the keys newest first, for the JWKS.
	ordered []*verifyKey
	// signers are the keys not retired when the ring was read, newest
	// first: the signing key and any key published to follow it. Which
	// of them signs depends on the instant (signerAt).
	signers []*signer
}

// signerAt returns the key that signs at now: the newest signer whose
// activation has passed and whose retirement has not, so that replicas
// reading the same keys switch to a published key at the same instant
// without a reload. When none qualifies (this clock lags the one that
// erased a retiring key's private half), the signer that activates first
// signs: it is published already. Nil only when there is no signer.
func (r *keyring) signerAt(now time.Time) *signer {
	var next *signer
	for _, s := range r.signers {
		if now.Before(s.from) {
			if next == nil || s.from.Before(next.from) {
				next = s
			}
			continue
		}
		if s.until.IsZero() || now.Before(s.until) {
			return s
		}
	}
	if next == nil && len(r.signers) > 0 {
		next = r.signers[0]
	}
	return next
}

// lookup returns the key named kid if it may still verify tokens at now:
// current, or retired less than window ago.
func (r *keyring) lookup(kid string, now time.Time, window time.Duration) *verifyKey {
	k := r.byKID[kid]
	if k == nil || !k.usable(now, window) {
		return nil
	}
	return k
}

func (k *verifyKey) usable(now time.Time, window time.Duration) bool {
	return k.retiredAt.IsZero() || now.Before(k.retiredAt.Add(window))
}

// signs reports whether a token issued at iat and presented at now can
// carry k's signature: a key published ahead signs nothing before its
// activation, so no genuine token of it is presented earlier or names an
// earlier iat (whole seconds, rounded down, so up to a second before it),
// with leeway for the clocks of the replicas.
func (k *verifyKey) signs(iat, now time.Time, leeway time.Duration) bool {
	return !now.Add(leeway).Before(k.from) && iat.Add(leeway+time.Second).After(k.from)
}

// hs256Ring builds the one-key ring of HS256 mode.
func hs256Ring(secret []byte) (*keyring, error) {
	sum := sha256.Sum256(append([]byte("cachegate/josejwt hs256 kid\x00"), secret...))
	kid := "hs-" + base64.RawURLEncoding.EncodeToString(sum[:12])
	s, err := newSigner(jose.HS256, kid, secret)
	if err != nil {
		return nil, err
	}
	k := &verifyKey{kid: kid, key: secret}
	return &keyring{byKID: map[string]*verifyKey{kid: k}, byRefreshHeader: map[string]*verifyKey{s.refresh[:len(s.refresh)-1]: k},
		ordered: []*verifyKey{k}, signers: []*signer{s}}, nil
}

// eddsaRing builds a ring from stored keys (newest first) as they are at
// now, opening the private halves of the keys not retired by then (the
// signing key and any published one) with seal when they are sealed.
// Keys of other algorithms are ignored: only EdDSA is accepted in this
// mode. It returns a ring without signers when no EdDSA key can sign.
func eddsaRing(stored []domain.SigningKey, seal *sealer, now time.Time) (*keyring, error) {
	r := &keyring{byKID: make(map[string]*verifyKey, len(stored)), byRefreshHeader: make(map[string]*verifyKey, len(stored)),
		revoked: map[string]bool{}}
	for _, sk := range stored {
		if sk.Algorithm != algEdDSA {
			continue
		}
		if sk.RevokedAt != nil {
			r.revoked[sk.ID] = true
			continue
		}
		if sk.ID == "" || len(sk.Public) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("stored signing key %q is malformed", sk.ID)
		}
		if _, dup := r.byKID[sk.ID]; dup {
			return nil, fmt.Errorf("stored signing key %q appears twice", sk.ID)
		}
		k := &verifyKey{kid: sk.ID, key: ed25519.PublicKey(bytes.Clone(sk.Public)), from: sk.Activation()}
		if sk.RetiredAt != nil {
			k.retiredAt = *sk.RetiredAt
		}
		r.byKID[sk.ID], r.byRefreshHeader[encodedHeader(jose.EdDSA, sk.ID, typRefresh)] = k, k
		r.ordered = append(r.ordered, k)
		if sk.RetiredAt != nil && (!now.Before(*sk.RetiredAt) || len(sk.Private) == 0) {
			// Retired, or retiring and erased already by a process
			// whose clock is ahead: it signs no more.
			continue
		}
		priv, err := privateKey(sk, seal)
		if err != nil {
			return nil, err
		}
		if seal != nil && !isSealed(sk.Private) {
			r.plain = append(r.plain, sk.ID)
		}
		s, err := newSigner(jose.EdDSA, sk.ID, priv)
		if err != nil {
			return nil, err
		}
		s.from = sk.Activation()
		if sk.RetiredAt != nil {
			s.until = *sk.RetiredAt
		}
		r.signers = append(r.signers, s)
	}
	return r, nil
}

// privateKey rebuilds the Ed25519 private key of sk from its seed,
// opening it with seal when it is sealed, and checks that it matches the
// stored public key. A sealed seed without seal is an error.
func privateKey(sk domain.SigningKey, seal *sealer) (ed25519.PrivateKey, error) {
	seed := sk.Private
	if isSealed(seed) {
		if seal == nil {
			return nil, fmt.Errorf("stored signing key %q is encrypted: configure the key encryption secret (--key-encryption-secret-file)", sk.ID)
		}
		var err error
		if seed, err = seal.open(sk.ID, seed); err != nil {
			return nil, fmt.Errorf("stored signing key %q: %w", sk.ID, err)
		}
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("stored signing key %q has no valid private seed", sk.ID)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if !bytes.Equal(priv.Public().(ed25519.PublicKey), sk.Public) {
		return nil, fmt.Errorf("stored signing key %q: private and public keys do not match", sk.ID)
	}
	return priv, nil
}

// newSigner makes the signer of one key: an ed25519.PrivateKey for EdDSA,
// an HMAC secret for HS256.
func newSigner(alg jose.SignatureAlgorithm, kid string, key any) (*signer, error) {
	s := &signer{kid: kid}
	switch k := key.(type) {
	case ed25519.PrivateKey:
		if alg != jose.EdDSA || len(k) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("signer for key %q: not an EdDSA key", kid)
		}
		// curve25519-voi signs in half the time of crypto/ed25519 (its
		// fixed-base multiplication and table lookups use AVX2 where the
		// CPU has it) and writes the same bytes: Ed25519 signatures are
		// deterministic (RFC 8032), which TestSignerWritesWhatGoJoseWrites
		// and FuzzEdDSASignerIsCryptoEd25519 hold it to. Verification
		// stays with go-jose and crypto/ed25519.
		vk := voi.PrivateKey(k)
		s.sign = func(input []byte) []byte { return voi.Sign(vk, input) }
	case []byte:
		if alg != jose.HS256 || len(k) == 0 {
			return nil, fmt.Errorf("signer for key %q: not an HS256 secret", kid)
		}
		secret := bytes.Clone(k)
		s.sign = func(input []byte) []byte {
			m := hmac.New(sha256.New, secret)
			m.Write(input)
			return m.Sum(nil)
		}
	default:
		return nil, fmt.Errorf("signer for key %q: unsupported key type %T", kid, key)
	}
	s.access, s.refresh = encodedHeader(alg, kid, typAccess)+".", encodedHeader(alg, kid, typRefresh)+"."
	return s, nil
}

// encodedHeader returns the base64url-encoded protected header the signer
// writes on a token of type typ signed by the key kid (marshalling three
// strings cannot fail).
func encodedHeader(alg jose.SignatureAlgorithm, kid, typ string) string {
	h, _ := json.Marshal(struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}{string(alg), kid, typ})
	return base64.RawURLEncoding.EncodeToString(h)
}

// newEd25519Key generates a signing key created at now. Its kid is the
// first 16 characters of the key's RFC 7638 thumbprint. A key whose kid
// would begin with "-" (one in 64) is drawn again, so that a kid given to
// `cachegate keys revoke` is never taken for a flag (README.md,
// "Commands").
func newEd25519Key(random io.Reader, now time.Time) (domain.SigningKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	var pub ed25519.PublicKey
	var kid string
	for kid == "" || kid[0] == '-' {
		if _, err := io.ReadFull(random, seed); err != nil {
			return domain.SigningKey{}, fmt.Errorf("generate signing key: %w", err)
		}
		pub = ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		jwk := jose.JSONWebKey{Key: pub}
		tp, err := jwk.Thumbprint(crypto.SHA256)
		if err != nil {
			return domain.SigningKey{}, fmt.Errorf("generate signing key: %w", err)
		}
		kid = base64.RawURLEncoding.EncodeToString(tp)[:16]
	}
	return domain.SigningKey{
		ID:          kid,
		Algorithm:   algEdDSA,
		Private:     seed,
		Public:      pub,
		DateCreated: domain.Normalize(now),
	}, nil
}

// errHS256Rotate is returned by Rotate in HS256 mode, errHS256Revoke by
// Revoke.
var (
	errHS256Rotate = errors.New("josejwt: an HS256 secret is configured, not a stored key; change the secret to rotate")
	errHS256Revoke = errors.New("josejwt: an HS256 secret is configured, not a stored key; change the secret to revoke it")
)
