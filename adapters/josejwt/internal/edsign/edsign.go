// Package edsign signs with Ed25519 (RFC 8032, the pure variant) as
// crypto/ed25519 does, byte for byte, at less cost per signature: the
// private key is expanded once, not per call, and Pair signs two messages
// with one field inversion between them.
//
// A signature's costly steps are the scalar multiplication R = r·B of its
// nonce and the encoding of R, which divides by R's projective Z: one
// field inversion, about a third of the multiplication's time. Pair
// inverts the product of its two signatures' Z and recovers each inverse
// with a multiplication (Montgomery's trick). Everything is
// filippo.io/edwards25519, the public release of the standard library's
// own package, in constant time; nothing else about the signatures
// changes (TestSignIsCryptoEd25519 and FuzzSignIsCryptoEd25519 hold every
// signature equal to crypto/ed25519's).
package edsign

import (
	"crypto/ed25519"
	"crypto/sha512"
	"errors"

	"filippo.io/edwards25519"
	"filippo.io/edwards25519/field"
)

// Key is an Ed25519 private key expanded for signing. It is read only
// after NewKey and safe for concurrent use.
type Key struct {
	s      edwards25519.Scalar
	prefix [32]byte
	pub    [ed25519.PublicKeySize]byte
}

// NewKey expands priv (RFC 8032, 5.1.5: the SHA-512 of the seed gives the
// secret scalar and the nonce prefix).
func NewKey(priv ed25519.PrivateKey) (*Key, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, errors.New("edsign: bad private key length")
	}
	h := sha512.Sum512(priv.Seed())
	k := &Key{}
	if _, err := k.s.SetBytesWithClamping(h[:32]); err != nil {
		return nil, err
	}
	copy(k.prefix[:], h[32:])
	copy(k.pub[:], priv[ed25519.SeedSize:])
	return k, nil
}

// Sign returns the signature of m.
func (k *Key) Sign(m []byte) []byte {
	var r edwards25519.Scalar
	var R edwards25519.Point
	k.nonce(&r, &R, m)
	_, _, z, _ := R.ExtendedCoordinates()
	var zInv field.Element
	zInv.Invert(z)
	sig := make([]byte, ed25519.SignatureSize)
	k.finish(sig, m, &r, &R, &zInv)
	return sig
}

// Pair returns the signatures of a and b, with one field inversion for
// both.
func (k *Key) Pair(a, b []byte) (sigA, sigB []byte) {
	var ra, rb edwards25519.Scalar
	var Ra, Rb edwards25519.Point
	k.nonce(&ra, &Ra, a)
	k.nonce(&rb, &Rb, b)
	_, _, za, _ := Ra.ExtendedCoordinates()
	_, _, zb, _ := Rb.ExtendedCoordinates()
	// 1/(za·zb) times zb is 1/za, times za is 1/zb. Neither is zero: a
	// point's projective Z never is.
	var inv, zaInv, zbInv field.Element
	inv.Multiply(za, zb)
	inv.Invert(&inv)
	zaInv.Multiply(&inv, zb)
	zbInv.Multiply(&inv, za)
	sigs := make([]byte, 2*ed25519.SignatureSize)
	sigA, sigB = sigs[:ed25519.SignatureSize:ed25519.SignatureSize], sigs[ed25519.SignatureSize:]
	k.finish(sigA, a, &ra, &Ra, &zaInv)
	k.finish(sigB, b, &rb, &Rb, &zbInv)
	return sigA, sigB
}

// nonce sets r to m's nonce SHA-512(prefix || m) mod L and R to r·B
// (RFC 8032, 5.1.6, steps 2 and 3).
func (k *Key) nonce(r *edwards25519.Scalar, R *edwards25519.Point, m []byte) {
	h := sha512.New()
	h.Write(k.prefix[:])
	h.Write(m)
	var d [sha512.Size]byte
	if _, err := r.SetUniformBytes(h.Sum(d[:0])); err != nil {
		panic("edsign: " + err.Error()) // 64 bytes are always uniform input
	}
	R.ScalarBaseMult(r)
}

// finish writes the signature of m into sig: R encoded with zInv, the
// inverse of its Z, then S = r + SHA-512(R || A || m)·s mod L (RFC 8032,
// 5.1.6, steps 3 to 6).
func (k *Key) finish(sig, m []byte, r *edwards25519.Scalar, R *edwards25519.Point, zInv *field.Element) {
	X, Y, _, _ := R.ExtendedCoordinates()
	var x, y field.Element
	x.Multiply(X, zInv)
	y.Multiply(Y, zInv)
	copy(sig[:32], y.Bytes())
	sig[31] |= byte(x.IsNegative() << 7)
	h := sha512.New()
	h.Write(sig[:32])
	h.Write(k.pub[:])
	h.Write(m)
	var d [sha512.Size]byte
	var c edwards25519.Scalar
	if _, err := c.SetUniformBytes(h.Sum(d[:0])); err != nil {
		panic("edsign: " + err.Error())
	}
	copy(sig[32:], c.MultiplyAdd(&c, &k.s, r).Bytes())
}
