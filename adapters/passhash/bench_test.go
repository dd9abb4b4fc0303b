package passhash

import (
	"context"
	"testing"

	"github.com/cachegate/cachegate/ports"
)

func benchValidate(b *testing.B, opts Options) {
	h := newHasher(b, opts)
	hash, _, err := h.Hash(context.Background(), "benchmark password")
	if err != nil {
		b.Fatal(err)
	}
	in := ports.PasswordCheck{Password: "benchmark password", PasswordHash: hash}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := h.Validate(context.Background(), in); !ok || err != nil {
			b.Fatalf("Validate = %v, %v", ok, err)
		}
	}
}

// BenchmarkBcryptValidate measures one login's password check at the
// default cost 10: the floor of the login benchmark.
func BenchmarkBcryptValidate(b *testing.B) { benchValidate(b, Options{BcryptCost: DefaultBcryptCost}) }

// BenchmarkArgon2idValidate measures the same with the default argon2id
// parameters.
func BenchmarkArgon2idValidate(b *testing.B) { benchValidate(b, Options{Algorithm: Argon2id}) }
