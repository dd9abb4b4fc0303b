package passhash

import (
	"errors"
	"testing"
)

func TestBcryptCostAboveSixteenVerifiesOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	// Only parsing is exercised: a cost-17 check is too slow for a test.
	const cost17 = "$2b$17$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm"
	if _, err := parseBcrypt(cost17, newHasher(t, Options{}).bcryptVerifyLimit()); !errors.Is(err, ErrMalformedHash) {
		t.Fatalf("default limit: %v", err)
	}
	if c, err := parseBcrypt(cost17, newHasher(t, Options{BcryptCost: 17}).bcryptVerifyLimit()); c != 17 || err != nil {
		t.Fatalf("cost-17 setting: %d, %v", c, err)
	}
}

func TestNeedsRehash(t *testing.T) {
	t.Parallel()
	const (
		b04 = "$2b$04$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm"
		b10 = "$2b$10$keO.ZZs22YtygVF6BLfhGOI/JjshJYPp8DZsUtym6mJV2Eha2Hdd."
		a10 = "$2a$10$keO.ZZs22YtygVF6BLfhGOI/JjshJYPp8DZsUtym6mJV2Eha2Hdd."
		b12 = "$2b$12$keO.ZZs22YtygVF6BLfhGOI/JjshJYPp8DZsUtym6mJV2Eha2Hdd."
		// salt "somesalt" (8 bytes), key 32 bytes unless noted.
		aSmall = "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"
		aOWASP = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"
		aMore  = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHRzb21lc2FsdA$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"
		aFewT  = "$argon2id$v=19$m=65536,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"
		aShort = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$c29tZXNhbHRzb21lc2FsdA"
	)
	bcrypt10, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	argon, err := New(Options{Algorithm: Argon2id})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		h    *Hasher
		hash string
		want bool
	}{
		{"bcrypt of lower cost is upgraded", bcrypt10, b04, true},
		{"bcrypt of equal cost is kept", bcrypt10, b10, false},
		{"the $2a$ version of equal cost is kept", bcrypt10, a10, false},
		{"bcrypt of higher cost is kept", bcrypt10, b12, false},
		{"argon2id is replaced when bcrypt is configured", bcrypt10, aOWASP, true},
		{"bcrypt is replaced when argon2id is configured", argon, b12, true},
		{"argon2id with less memory is upgraded", argon, aSmall, true},
		{"argon2id with the configured parameters is kept", argon, aOWASP, false},
		{"argon2id with more memory, passes and lanes is kept", argon, aMore, false},
		{"argon2id with fewer passes is upgraded", argon, aFewT, true},
		{"argon2id with a shorter key is upgraded", argon, aShort, true},
		{"an empty hash is replaced", argon, "", true},
		{"an unknown format is replaced", bcrypt10, "hunter2", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.h.NeedsRehash(tc.hash); got != tc.want {
				t.Fatalf("NeedsRehash = %v, want %v", got, tc.want)
			}
		})
	}
}
