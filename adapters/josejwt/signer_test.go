package josejwt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// TestSignerWritesWhatGoJoseWrites signs the same payloads with the
// compact signer and with a go-jose signer set up as the issuer used to
// be: EdDSA and HMAC signatures are deterministic, so the tokens must be
// equal byte for byte, and go-jose must verify them.
func TestSignerWritesWhatGoJoseWrites(t *testing.T) {
	t.Parallel()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	keys := []struct {
		alg    jose.SignatureAlgorithm
		key    any
		verify any
	}{
		{jose.EdDSA, ed25519.NewKeyFromSeed(seed), ed25519.NewKeyFromSeed(seed).Public()},
		{jose.HS256, []byte("0123456789abcdef0123456789abcdef"), []byte("0123456789abcdef0123456789abcdef")},
	}
	payloads := [][]byte{
		[]byte(`{"iss":"cachegate","sub":"0195f3a4-0000-7000-8000-000000000001","aud":"cachegate","exp":1900000000,"iat":1899999000,"jti":"j","sid":"f"}`),
		[]byte(`{}`),
		[]byte(`{"odd":"\u00e9\"<>&"}`),
	}
	for _, k := range keys {
		s, err := newSigner(k.alg, "kid-1", k.key)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{typAccess, typRefresh} {
			h := s.access
			if typ == typRefresh {
				h = s.refresh
			}
			js, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.key},
				(&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", "kid-1"))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range payloads {
				obj, err := js.Sign(p)
				if err != nil {
					t.Fatal(err)
				}
				want, err := obj.CompactSerialize()
				if err != nil {
					t.Fatal(err)
				}
				got := s.compact(h, p)
				if got != want {
					t.Errorf("%s %s: compact signer wrote\n%s\ngo-jose writes\n%s", k.alg, typ, got, want)
				}
				parsed, err := jose.ParseSigned(got, []jose.SignatureAlgorithm{k.alg})
				if err != nil {
					t.Fatalf("%s %s: go-jose cannot parse the token: %v", k.alg, typ, err)
				}
				if out, err := parsed.Verify(k.verify); err != nil || string(out) != string(p) {
					t.Errorf("%s %s: go-jose verifies %q, %v", k.alg, typ, out, err)
				}
			}
		}
	}
	if _, err := newSigner(jose.EdDSA, "k", []byte("a secret, not a key")); err == nil {
		t.Error("newSigner took an HMAC secret as an EdDSA key")
	}
}

// FuzzEdDSASignerIsCryptoEd25519 holds the EdDSA signer (curve25519-voi)
// to crypto/ed25519's signature, byte for byte, for any key and input.
func FuzzEdDSASignerIsCryptoEd25519(f *testing.F) {
	f.Add([]byte("seed"), []byte("eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0"))
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0xff}, bytes.Repeat([]byte{0xff}, 700))
	f.Fuzz(func(t *testing.T, seed, input []byte) {
		s32 := sha256.Sum256(seed)
		priv := ed25519.NewKeyFromSeed(s32[:])
		s, err := newSigner(jose.EdDSA, "kid", priv)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.sign(input), ed25519.Sign(priv, input); !bytes.Equal(got, want) {
			t.Fatalf("the signer signs %x, crypto/ed25519 %x", got, want)
		}
	})
}
