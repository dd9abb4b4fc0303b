package josejwt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
)

// Sealed private keys (Options.KeyEncryptionSecret) are stored as
//
//	"cgk1" | salt (16 bytes) | nonce (12 bytes) | AES-256-GCM ciphertext and tag
//
// where the AES key is HKDF-SHA256 of the secret with that salt and the
// info sealInfo, and the additional data is sealAADPrefix followed by the
// kid, so a sealed seed moved to another key's row does not open. Salt and
// nonce are fresh random bytes for every sealing. A stored private half is
// sealed exactly when it starts with the magic: a plain Ed25519 seed is 32
// bytes, a sealed one 80.
const (
	sealMagic     = "cgk1"
	sealSaltLen   = 16
	sealNonceLen  = 12
	sealInfo      = "cachegate/josejwt signing key v1"
	sealAADPrefix = "cachegate signing key "
)

// MinKeyEncryptionSecretLen is the shortest key encryption secret
// accepted, in bytes.
const MinKeyEncryptionSecretLen = 32

// sealer seals and opens private keys with one secret.
type sealer struct {
	secret []byte
	random io.Reader
}

// isSealed reports whether a stored private half is sealed.
func isSealed(b []byte) bool { return bytes.HasPrefix(b, []byte(sealMagic)) }

func (s *sealer) aead(salt []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, s.secret, salt, sealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal returns the stored form of private for the key kid.
func (s *sealer) seal(kid string, private []byte) ([]byte, error) {
	head := make([]byte, len(sealMagic)+sealSaltLen+sealNonceLen)
	copy(head, sealMagic)
	if _, err := io.ReadFull(s.random, head[len(sealMagic):]); err != nil {
		return nil, fmt.Errorf("seal signing key: %w", err)
	}
	salt := head[len(sealMagic) : len(sealMagic)+sealSaltLen]
	nonce := head[len(sealMagic)+sealSaltLen:]
	aead, err := s.aead(salt)
	if err != nil {
		return nil, fmt.Errorf("seal signing key: %w", err)
	}
	return aead.Seal(head, nonce, private, []byte(sealAADPrefix+kid)), nil
}

// errWrongSecret is the reason a sealed key does not open.
var errWrongSecret = errors.New("it does not decrypt with the configured key encryption secret (wrong secret, or the stored value was altered)")

// open returns the private half sealed in stored for the key kid.
func (s *sealer) open(kid string, stored []byte) ([]byte, error) {
	if len(stored) < len(sealMagic)+sealSaltLen+sealNonceLen {
		return nil, errWrongSecret
	}
	salt := stored[len(sealMagic) : len(sealMagic)+sealSaltLen]
	nonce := stored[len(sealMagic)+sealSaltLen : len(sealMagic)+sealSaltLen+sealNonceLen]
	aead, err := s.aead(salt)
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, nonce, stored[len(sealMagic)+sealSaltLen+sealNonceLen:], []byte(sealAADPrefix+kid))
	if err != nil {
		return nil, errWrongSecret
	}
	return plain, nil
}
