package passhash

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// cheapArgon2 keeps argon2id tests fast; production uses the defaults.
var cheapArgon2 = Argon2Params{Memory: 64, Iterations: 1, Parallelism: 1}

func newHasher(t testing.TB, opts Options) *Hasher {
	t.Helper()
	h, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

func TestNewAppliesDefaultsAndRejectsBadOptions(t *testing.T) {
	t.Parallel()
	h := newHasher(t, Options{})
	if h.Algorithm() != Bcrypt || h.bcryptCost != DefaultBcryptCost || h.argon2 != DefaultArgon2Params() {
		t.Fatalf("defaults = %s cost %d %+v", h.Algorithm(), h.bcryptCost, h.argon2)
	}
	bad := []struct {
		name string
		opts Options
		want string
	}{
		{"an unknown algorithm is refused", Options{Algorithm: "md5"}, "algorithm"},
		{"a bcrypt cost below 4 is refused", Options{BcryptCost: 3}, "bcrypt cost 3"},
		{"a bcrypt cost above 31 is refused", Options{BcryptCost: 32}, "bcrypt cost 32"},
		{"argon2 memory below 8 per lane is refused", Options{Argon2: Argon2Params{Memory: 15, Parallelism: 2}}, "memory 15"},
		{"argon2 memory above 1 GiB is refused", Options{Argon2: Argon2Params{Memory: 1<<20 + 1}}, "memory"},
		{"argon2 work above the bound is refused", Options{Argon2: Argon2Params{Memory: 1 << 20, Iterations: 5}}, "memory×iterations"},
		{"argon2 parallelism above 16 is refused", Options{Argon2: Argon2Params{Parallelism: 17}}, "parallelism 17"},
		{"a short argon2 salt is refused", Options{Argon2: Argon2Params{SaltLength: 4}}, "salt length 4"},
		{"a long argon2 key is refused", Options{Argon2: Argon2Params{KeyLength: 65}}, "key length 65"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New(%+v) = %v, want an error mentioning %q", tc.opts, err, tc.want)
			}
		})
	}
	t.Run("every problem is reported at once", func(t *testing.T) {
		t.Parallel()
		_, err := New(Options{Algorithm: "md5", BcryptCost: 99})
		if err == nil || !strings.Contains(err.Error(), "algorithm") || !strings.Contains(err.Error(), "bcrypt cost 99") {
			t.Fatalf("New = %v", err)
		}
	})
}

func TestHashThenValidateRoundTrips(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		opts   Options
		prefix string
		// slow cases try one password, the others every one.
		slow bool
	}{
		{"bcrypt at cost 4", Options{BcryptCost: 4}, "$2a$04$", false},
		{"argon2id with cheap parameters", Options{Algorithm: Argon2id, Argon2: cheapArgon2}, "$argon2id$v=19$m=64,t=1,p=1$", false},
		{"argon2id with the default parameters", Options{Algorithm: Argon2id}, "$argon2id$v=19$m=19456,t=2,p=1$", true},
	}
	all := []string{"correct horse battery staple", "", "pässwörd ☃", "nul\x00inside", strings.Repeat("x", 72)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHasher(t, tc.opts)
			ctx := context.Background()
			passwords := all
			if tc.slow {
				passwords = all[:1]
			}
			for _, pw := range passwords {
				hash, salt, err := h.Hash(ctx, pw)
				if err != nil {
					t.Fatalf("Hash: %v", err)
				}
				if salt != "" || !strings.HasPrefix(hash, tc.prefix) {
					t.Fatalf("Hash = %q, salt %q; want prefix %q and no salt", hash, salt, tc.prefix)
				}
				if ok, err := h.Validate(ctx, ports.PasswordCheck{Password: pw, PasswordHash: hash}); !ok || err != nil {
					t.Fatalf("Validate(right password) = %v, %v", ok, err)
				}
				if ok, err := h.Validate(ctx, ports.PasswordCheck{Password: pw + "!", PasswordHash: hash}); ok || err != nil {
					t.Fatalf("Validate(wrong password) = %v, %v", ok, err)
				}
				u := domain.User{PasswordHash: hash}
				if ok, err := h.ValidateObject(ctx, pw, u); !ok || err != nil {
					t.Fatalf("ValidateObject = %v, %v", ok, err)
				}
				if h.NeedsRehash(hash) {
					t.Fatal("a fresh hash needs rehash")
				}
			}
		})
	}
	t.Run("two hashes of one password differ by their salt", func(t *testing.T) {
		t.Parallel()
		h := newHasher(t, Options{Algorithm: Argon2id, Argon2: cheapArgon2})
		a, _, _ := h.Hash(context.Background(), "same")
		b, _, _ := h.Hash(context.Background(), "same")
		if a == b {
			t.Fatal("identical hashes")
		}
	})
}

func TestValidateAcceptsHashesOfEitherAlgorithmWhateverTheSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bc := newHasher(t, Options{BcryptCost: 4})
	ar := newHasher(t, Options{Algorithm: Argon2id, Argon2: cheapArgon2})
	bh, _, _ := bc.Hash(ctx, "secret-one")
	ah, _, _ := ar.Hash(ctx, "secret-one")
	for _, tc := range []struct {
		name string
		h    *Hasher
		hash string
	}{
		{"an argon2id hasher verifies bcrypt", ar, bh},
		{"a bcrypt hasher verifies argon2id", bc, ah},
	} {
		if ok, err := tc.h.Validate(ctx, ports.PasswordCheck{Password: "secret-one", PasswordHash: tc.hash}); !ok || err != nil {
			t.Errorf("%s: Validate = %v, %v", tc.name, ok, err)
		}
	}
}

// Published vectors: pyca/bcrypt's test suite (the $2b$10$ one is hash
// plus separately stored salt, exactly how the NestJS modules store
// bcryptjs output), OpenBSD's $2a$ vector, and the argon2 reference
// implementation's test.c.
var knownHashes = []struct {
	name     string
	password string
	salt     string
	hash     string
}{
	{"a $2b$10$ hash with its salt stored apart", "}>\xb3\xfe\xf1\x8b\xa0\xe6(\xa2Lzq\xc3P\x7f\xcc\xc8b{\xf9\x14\xf6\xf6`\x81G5\xec\x1d\x87\x10\xbf\xa7\xe1}I7 \x96\xdfc\xf2\xbf\xb3Vh\xdfM\x88q\xf7\xff\x1b\x82~z\x13\xdd\xe9\x84\x00\xdd4",
		"$2b$10$keO.ZZs22YtygVF6BLfhGO", "$2b$10$keO.ZZs22YtygVF6BLfhGOI/JjshJYPp8DZsUtym6mJV2Eha2Hdd."},
	{"a $2b$04$ hash with its salt stored apart", "Kk4DQuMMfZL9o",
		"$2b$04$cVWp4XaNU8a4v1uMRum2SO", "$2b$04$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm"},
	{"a $2a$05$ hash", "U*U", "", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"},
	{"a $2y$05$ hash", "\xa3", "", "$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq"},
	{"a reference argon2id hash", "password", "", "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"},
	{"a reference argon2id hash with two lanes", "password", "", "$argon2id$v=19$m=256,t=2,p=2$c29tZXNhbHQ$bQk8UB/VmZZF4Oo79iDXuL5/0ttZwg2f/5U52iv1cDc"},
}

func TestValidateVerifiesPublishedHashes(t *testing.T) {
	t.Parallel()
	h := newHasher(t, Options{BcryptCost: 4})
	for _, tc := range knownHashes {
		t.Run(tc.name+" verifies", func(t *testing.T) {
			t.Parallel()
			if tc.salt != "" && !strings.HasPrefix(tc.hash, tc.salt) {
				t.Fatal("fixture: the stored salt is not the hash's prefix")
			}
			in := ports.PasswordCheck{Password: tc.password, PasswordHash: tc.hash, PasswordSalt: tc.salt}
			if ok, err := h.Validate(context.Background(), in); !ok || err != nil {
				t.Fatalf("Validate = %v, %v", ok, err)
			}
			if strings.HasPrefix(tc.hash, "$2b$10$") {
				return // a wrong password costs as much again; the cheap fixtures show it fails
			}
			in.Password = tc.password[:len(tc.password)-1]
			if ok, err := h.Validate(context.Background(), in); ok || err != nil {
				t.Fatalf("Validate(truncated password) = %v, %v", ok, err)
			}
		})
	}
}

func TestLongPasswords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bc := newHasher(t, Options{BcryptCost: 4})
	ar := newHasher(t, Options{Algorithm: Argon2id, Argon2: cheapArgon2})
	p73 := strings.Repeat("a", 73)
	p1025 := strings.Repeat("a", domain.MaxPasswordBytes+1)

	t.Run("bcrypt refuses to hash more than 72 bytes", func(t *testing.T) {
		t.Parallel()
		_, _, err := bc.Hash(ctx, p73)
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Details[0].Field != "password" {
			t.Fatalf("Hash = %v, want an invalid password field", err)
		}
	})
	t.Run("argon2id hashes more than 72 bytes", func(t *testing.T) {
		t.Parallel()
		hash, _, err := ar.Hash(ctx, p73)
		if err != nil {
			t.Fatalf("Hash: %v", err)
		}
		if ok, _ := ar.Validate(ctx, ports.PasswordCheck{Password: p73[:72], PasswordHash: hash}); ok {
			t.Fatal("argon2id truncated the password")
		}
	})
	t.Run("no algorithm hashes more than the domain maximum", func(t *testing.T) {
		t.Parallel()
		for _, h := range []*Hasher{bc, ar} {
			if _, _, err := h.Hash(ctx, p1025); domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("Hash(%s) = %v", h.Algorithm(), err)
			}
		}
	})
	t.Run("a bcrypt hash never matches more than 72 bytes though bcrypt would ignore the rest", func(t *testing.T) {
		t.Parallel()
		hash, _, _ := bc.Hash(ctx, p73[:72])
		if ok, err := bc.Validate(ctx, ports.PasswordCheck{Password: p73, PasswordHash: hash}); ok || err != nil {
			t.Fatalf("Validate = %v, %v", ok, err)
		}
	})
}

func TestValidateRejectsMalformedAndHostileHashes(t *testing.T) {
	t.Parallel()
	const goodB = "$2b$04$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm"
	const goodA = "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"
	cases := []struct {
		name string
		hash string
		want error
	}{
		{"plain text is an unknown format", "hunter2", ErrUnknownFormat},
		{"an md5-crypt hash is an unknown format", "$1$saltsalt$abcdefghijklmnopqrstuv", ErrUnknownFormat},
		{"argon2i is an unknown format", strings.Replace(goodA, "argon2id", "argon2i", 1), ErrUnknownFormat},
		{"the $2x$ bcrypt variant is an unknown format", strings.Replace(goodB, "$2b$", "$2x$", 1), ErrUnknownFormat},
		{"a truncated bcrypt hash is malformed", goodB[:59], ErrMalformedHash},
		{"a bcrypt hash with extra data is malformed", goodB + "x", ErrMalformedHash},
		{"a bcrypt cost of 3 is malformed", strings.Replace(goodB, "$04$", "$03$", 1), ErrMalformedHash},
		{"a bcrypt cost of 31 is refused", strings.Replace(goodB, "$04$", "$31$", 1), ErrMalformedHash},
		{"a bcrypt cost that is not a number is malformed", strings.Replace(goodB, "$04$", "$0x$", 1), ErrMalformedHash},
		{"a bcrypt hash outside its alphabet is malformed", strings.Replace(goodB, "cVWp", "c?Wp", 1), ErrMalformedHash},
		{"a truncated argon2id hash is malformed", goodA[:40], ErrMalformedHash},
		{"argon2id version 16 is malformed", strings.Replace(goodA, "v=19", "v=16", 1), ErrMalformedHash},
		{"argon2id with 2 GiB of memory is refused", strings.Replace(goodA, "m=256", "m=2097152", 1), ErrMalformedHash},
		{"argon2id with memory beyond 32 bits is refused", strings.Replace(goodA, "m=256", "m=99999999999", 1), ErrMalformedHash},
		{"argon2id with 1 GiB and 20 passes is refused", strings.Replace(goodA, "m=256,t=2", "m=1048576,t=20", 1), ErrMalformedHash},
		{"argon2id with 1000 passes is refused", strings.Replace(goodA, "t=2", "t=1000", 1), ErrMalformedHash},
		{"argon2id with 255 lanes is refused", strings.Replace(goodA, "p=1", "p=255", 1), ErrMalformedHash},
		{"argon2id with zero passes is malformed", strings.Replace(goodA, "t=2", "t=0", 1), ErrMalformedHash},
		{"argon2id with zero lanes is malformed", strings.Replace(goodA, "p=1", "p=0", 1), ErrMalformedHash},
		{"argon2id with memory below 8 per lane is malformed", strings.Replace(goodA, "m=256", "m=7", 1), ErrMalformedHash},
		{"argon2id with negative memory is malformed", strings.Replace(goodA, "m=256", "m=-1", 1), ErrMalformedHash},
		{"argon2id with parameters out of order is malformed", strings.Replace(goodA, "m=256,t=2", "t=2,m=256", 1), ErrMalformedHash},
		{"argon2id with an extra parameter is malformed", strings.Replace(goodA, "p=1", "p=1,keyid=x", 1), ErrMalformedHash},
		{"argon2id with bad base64 salt is malformed", strings.Replace(goodA, "c29tZXNhbHQ", "c29tZXNh!HQ", 1), ErrMalformedHash},
		{"argon2id with padded base64 is malformed", strings.Replace(goodA, "c29tZXNhbHQ", "c29tZXNhbHQ=", 1), ErrMalformedHash},
		{"argon2id with a 4-byte salt is malformed", strings.Replace(goodA, "c29tZXNhbHQ", "c29tZQ", 1), ErrMalformedHash},
		{"argon2id with a huge key is malformed", goodA + strings.Repeat("A", 100), ErrMalformedHash},
		{"argon2id with an extra field is malformed", goodA + "$x", ErrMalformedHash},
		{"a very long hash is malformed before parsing", "$argon2id$" + strings.Repeat("$", 1<<16), ErrMalformedHash},
	}
	h := newHasher(t, Options{BcryptCost: 4})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok, err := h.Validate(context.Background(), ports.PasswordCheck{Password: "password", PasswordHash: tc.hash})
			if ok || !errors.Is(err, tc.want) {
				t.Fatalf("Validate = %v, %v; want no match and %v", ok, err, tc.want)
			}
			if len(tc.hash) > 16 && strings.Contains(err.Error(), tc.hash[len(tc.hash)-16:]) {
				t.Fatalf("error %q quotes the hash", err)
			}
			if !h.NeedsRehash(tc.hash) {
				t.Fatal("NeedsRehash = false for a hash that does not parse")
			}
		})
	}
}

func TestValidateOfAnEmptyHashIsNoMatchAndNoError(t *testing.T) {
	t.Parallel()
	h := newHasher(t, Options{BcryptCost: 4})
	if ok, err := h.ValidateObject(context.Background(), "", domain.User{}); ok || err != nil {
		t.Fatalf("ValidateObject = %v, %v", ok, err)
	}
}

func TestACancelledContextIsAnError(t *testing.T) {
	t.Parallel()
	h := newHasher(t, Options{BcryptCost: 4})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := h.Hash(ctx, "password"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash = %v", err)
	}
	if _, err := h.Validate(ctx, ports.PasswordCheck{Password: "p", PasswordHash: knownHashes[1].hash}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Validate = %v", err)
	}
}
