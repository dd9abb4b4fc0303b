package josejwt

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	jose "github.com/go-jose/go-jose/v4"

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
	// retiredAt is zero while the key is current.
	retiredAt time.Time
}

// signer signs with the current key, one jose.Signer per typ header.
type signer struct {
	kid     string
	access  jose.Signer
	refresh jose.Signer
}

// keyring is an immutable snapshot of the keys; Tokens swaps whole
// snapshots on reload, so readers never lock.
type keyring struct {
	byKID map[string]*verifyKey
	// revoked names the revoked keys: they verify nothing, and a token
	// naming one causes no reload.
	revoked map[string]bool
	// plainCurrent is set when the current key's private half is stored
	// in clear although a key encryption secret is configured.
	plainCurrent bool
	// ordered lists the keys newest first, for the JWKS.
	ordered []*verifyKey
	current *signer
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

// hs256Ring builds the one-key ring of HS256 mode.
func hs256Ring(secret []byte) (*keyring, error) {
	sum := sha256.Sum256(append([]byte("cachegate/josejwt hs256 kid\x00"), secret...))
	kid := "hs-" + base64.RawURLEncoding.EncodeToString(sum[:12])
	s, err := newSigner(jose.HS256, kid, secret)
	if err != nil {
		return nil, err
	}
	k := &verifyKey{kid: kid, key: secret}
	return &keyring{byKID: map[string]*verifyKey{kid: k}, ordered: []*verifyKey{k}, current: s}, nil
}

// eddsaRing builds a ring from stored keys (newest first), opening the
// current key's private half with seal when it is sealed. Keys of other
// algorithms are ignored: only EdDSA is accepted in this mode. It returns
// a ring without a current signer when no EdDSA key is current.
func eddsaRing(stored []domain.SigningKey, seal *sealer) (*keyring, error) {
	r := &keyring{byKID: make(map[string]*verifyKey, len(stored)), revoked: map[string]bool{}}
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
		k := &verifyKey{kid: sk.ID, key: ed25519.PublicKey(bytes.Clone(sk.Public))}
		if sk.RetiredAt != nil {
			k.retiredAt = *sk.RetiredAt
		}
		r.byKID[sk.ID] = k
		r.ordered = append(r.ordered, k)
		if r.current != nil || sk.RetiredAt != nil {
			continue
		}
		priv, err := privateKey(sk, seal)
		if err != nil {
			return nil, err
		}
		r.plainCurrent = seal != nil && !isSealed(sk.Private)
		if r.current, err = newSigner(jose.EdDSA, sk.ID, priv); err != nil {
			return nil, err
		}
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

// newSigner makes the access and refresh signers of one key.
func newSigner(alg jose.SignatureAlgorithm, kid string, key any) (*signer, error) {
	mk := func(typ jose.ContentType) (jose.Signer, error) {
		return jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key},
			(&jose.SignerOptions{}).WithType(typ).WithHeader("kid", kid))
	}
	access, err := mk(typAccess)
	if err != nil {
		return nil, fmt.Errorf("signer for key %q: %w", kid, err)
	}
	refresh, err := mk(typRefresh)
	if err != nil {
		return nil, fmt.Errorf("signer for key %q: %w", kid, err)
	}
	return &signer{kid: kid, access: access, refresh: refresh}, nil
}

// newEd25519Key generates a signing key created at now. Its kid is the
// first 16 characters of the key's RFC 7638 thumbprint.
func newEd25519Key(random io.Reader, now time.Time) (domain.SigningKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(random, seed); err != nil {
		return domain.SigningKey{}, fmt.Errorf("generate signing key: %w", err)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	jwk := jose.JSONWebKey{Key: pub}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return domain.SigningKey{}, fmt.Errorf("generate signing key: %w", err)
	}
	return domain.SigningKey{
		ID:          base64.RawURLEncoding.EncodeToString(tp)[:16],
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
