package passhash

import (
	"context"
	"errors"
	"testing"

	"github.com/cachegate/cachegate/ports"
)

// FuzzValidate feeds arbitrary stored hashes to the parsers and, when the
// cost they declare is cheap, to Validate: nothing may panic, nothing but
// a well-formed hash may match, and every error is one of ours.
func FuzzValidate(f *testing.F) {
	for _, k := range knownHashes {
		f.Add(k.hash, k.password)
	}
	f.Add("$argon2id$v=19$m=8,t=1,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", "x")
	f.Add("$argon2id$v=19$m=4294967295,t=4294967295,p=255$$", "")
	f.Add("$2y$99$", "")
	f.Add("", "")
	h, err := New(Options{BcryptCost: MinBcryptCost})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, hash, password string) {
		bcost, berr := parseBcrypt(hash, h.bcryptVerifyLimit())
		a, aerr := parseArgon2id(hash)
		_ = h.NeedsRehash(hash)
		cheap := (berr == nil && bcost <= 5) ||
			(aerr == nil && uint64(a.params.Memory)*uint64(a.params.Iterations) <= 1024)
		if !cheap && (berr == nil || aerr == nil) {
			return // well-formed but slow: the parsers' bounds are what is fuzzed
		}
		ok, err := h.Validate(context.Background(), ports.PasswordCheck{Password: password, PasswordHash: hash})
		if ok && err != nil {
			t.Fatalf("match with error %v", err)
		}
		if ok && berr != nil && aerr != nil {
			t.Fatal("a hash that does not parse matched")
		}
		if err != nil && !errors.Is(err, ErrMalformedHash) && !errors.Is(err, ErrUnknownFormat) {
			t.Fatalf("unexpected error %v", err)
		}
		if berr == nil && aerr == nil {
			t.Fatal("a hash parsed as both algorithms")
		}
	})
}
