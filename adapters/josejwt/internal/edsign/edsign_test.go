package edsign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"testing"
)

// keyOf returns the private key of seed (any bytes: hashed to a seed).
func keyOf(seed []byte) ed25519.PrivateKey {
	s := sha256.Sum256(seed)
	return ed25519.NewKeyFromSeed(s[:])
}

// same fails t unless Sign and Pair give, for priv, a and b, the
// signatures crypto/ed25519 gives, and they verify.
func same(t *testing.T, priv ed25519.PrivateKey, a, b []byte) {
	t.Helper()
	k, err := NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	wantA, wantB := ed25519.Sign(priv, a), ed25519.Sign(priv, b)
	if got := k.Sign(a); !bytes.Equal(got, wantA) {
		t.Fatalf("Sign(%x) = %x, crypto/ed25519 signs %x", a, got, wantA)
	}
	gotA, gotB := k.Pair(a, b)
	if !bytes.Equal(gotA, wantA) || !bytes.Equal(gotB, wantB) {
		t.Fatalf("Pair(%x, %x) = %x, %x; crypto/ed25519 signs %x, %x", a, b, gotA, gotB, wantA, wantB)
	}
	pub := priv.Public().(ed25519.PublicKey)
	if !ed25519.Verify(pub, a, gotA) || !ed25519.Verify(pub, b, gotB) {
		t.Fatal("a signature of Pair does not verify")
	}
	// Writing into one signature must not reach the other.
	gotA[0] ^= 1
	if !bytes.Equal(gotB, wantB) {
		t.Fatal("the signatures of Pair share bytes")
	}
}

func TestSignIsCryptoEd25519(t *testing.T) {
	t.Parallel()
	// RFC 8032, 7.1, TEST 3: a known answer, besides crypto/ed25519's.
	seed := []byte{0xc5, 0xaa, 0x8d, 0xf4, 0x3f, 0x9f, 0x83, 0x7b, 0xed, 0xb7, 0x44, 0x2f, 0x31, 0xdc, 0xb7, 0xb1,
		0x66, 0xd3, 0x85, 0x35, 0x07, 0x6f, 0x09, 0x4b, 0x85, 0xce, 0x3a, 0x2e, 0x0b, 0x44, 0x58, 0xf7}
	k, err := NewKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	const want = "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac" +
		"18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"
	if got := k.Sign([]byte{0xaf, 0x82}); hex(got) != want {
		t.Fatalf("RFC 8032 TEST 3: Sign = %s, want %s", hex(got), want)
	}
	for i := range 300 {
		priv := keyOf([]byte{byte(i), byte(i >> 8)})
		a := bytes.Repeat([]byte{byte(i)}, i)
		same(t, priv, a, append(a, 'x'))
		same(t, priv, a, a)
	}
}

func TestNewKeyRefusesAShortKey(t *testing.T) {
	t.Parallel()
	if _, err := NewKey(make([]byte, ed25519.PrivateKeySize-1)); err == nil {
		t.Fatal("NewKey took a 63-byte key")
	}
}

func FuzzSignIsCryptoEd25519(f *testing.F) {
	f.Add([]byte("seed"), []byte("header.payload"), []byte(""))
	f.Add([]byte{}, bytes.Repeat([]byte{0xff}, 300), []byte{0})
	f.Fuzz(func(t *testing.T, seed, a, b []byte) {
		same(t, keyOf(seed), a, b)
	})
}

func hex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func BenchmarkSign(b *testing.B) {
	priv := keyOf(nil)
	k, _ := NewKey(priv)
	m := make([]byte, 350)
	b.Run("crypto-ed25519", func(b *testing.B) {
		for b.Loop() {
			ed25519.Sign(priv, m)
		}
	})
	b.Run("edsign", func(b *testing.B) {
		for b.Loop() {
			k.Sign(m)
		}
	})
	b.Run("crypto-ed25519-two", func(b *testing.B) {
		for b.Loop() {
			ed25519.Sign(priv, m)
			ed25519.Sign(priv, m)
		}
	})
	b.Run("edsign-pair", func(b *testing.B) {
		for b.Loop() {
			k.Pair(m, m)
		}
	})
}
