package passhash

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/cachegate/cachegate/ports"
)

// countBlocks makes h count the 1 KiB blocks its argon2id runs compute
// (memory × iterations, memory rounded as argon2.IDKey rounds it), the
// work that makes an argon2id check cost what it costs.
func countBlocks(h *Hasher) *atomic.Uint64 {
	var blocks atomic.Uint64
	h.argon2Key = func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
		lane := 4 * uint32(threads)
		m := max(memory, 2*lane) / lane * lane
		blocks.Add(uint64(m) * uint64(time))
		return argon2.IDKey(password, salt, time, memory, threads, keyLen)
	}
	return &blocks
}

// Equal time for unknown users after the argon2id setting was raised
// (docs/api.md, "Authentication"): an unknown user's login checks the password
// against a dummy hash at the setting; a wrong password for a user whose
// stored argon2id hash has less memory or fewer iterations must compute
// as many blocks, counted, not timed.
func TestArgon2idFailuresComputeTheBlocksOfACheckAtTheSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setting := Argon2Params{Memory: 256, Iterations: 3, Parallelism: 1}
	h := newHasher(t, Options{Algorithm: Argon2id, Argon2: setting})
	blocks := countBlocks(h)
	dummy, _, err := h.Hash(ctx, "the dummy password of unknown users")
	if err != nil {
		t.Fatal(err)
	}
	cost := func(hash, password string) uint64 {
		t.Helper()
		before := blocks.Load()
		if _, err := h.Validate(ctx, ports.PasswordCheck{Password: password, PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
		return blocks.Load() - before
	}
	unknown := cost(dummy, "a wrong password")
	if unknown != 256*3 {
		t.Fatalf("a check at the setting computed %d blocks, want %d", unknown, 256*3)
	}
	// argon2id rounds memory to 4 KiB per lane; the padding run is exact
	// to that per pass.
	slack := uint64(4 * setting.Parallelism * uint8(setting.Iterations))
	for _, stored := range []Argon2Params{
		{Memory: 128, Iterations: 1},
		{Memory: 64, Iterations: 2},
		{Memory: 256, Iterations: 1},
		{Memory: 256, Iterations: 2},
		{Memory: 100, Iterations: 3},
		{Memory: 8, Iterations: 1},
		{Memory: 512, Iterations: 1}, // fewer iterations but more blocks: not padded down
		{Memory: 256, Iterations: 3}, // the setting itself
	} {
		stored.Parallelism = 1
		old := newHasher(t, Options{Algorithm: Argon2id, Argon2: stored})
		hash, _, err := old.Hash(ctx, "the right password")
		if err != nil {
			t.Fatal(err)
		}
		own := argon2Blocks(stored)
		want := max(unknown, own)
		if got := cost(hash, "a wrong password"); got > want || got+slack < want {
			t.Errorf("m=%d,t=%d: a wrong password computed %d blocks, an unknown user %d: want %d (within %d)",
				stored.Memory, stored.Iterations, got, unknown, want, slack)
		}
		if got := cost(hash, "the right password"); got != own {
			t.Errorf("m=%d,t=%d: the right password computed %d blocks, want the hash's own %d (successes are not padded)",
				stored.Memory, stored.Iterations, got, own)
		}
	}

	long := strings.Repeat("x", 1025)
	if got := cost(dummy, long); got != 0 {
		t.Errorf("a password too long to hash computed %d blocks against the dummy", got)
	}
	weak := newHasher(t, Options{Algorithm: Argon2id, Argon2: Argon2Params{Memory: 64, Iterations: 1, Parallelism: 1}})
	hash, _, err := weak.Hash(ctx, "the right password")
	if err != nil {
		t.Fatal(err)
	}
	if got := cost(hash, long); got != 0 {
		t.Errorf("a password too long to hash computed %d blocks against an older hash, the dummy none", got)
	}
}

// A stored hash of another algorithm than the setting's cannot be padded
// with work of the same kind: its failures wait until the measured time
// of a check at the setting. time.Sleep never returns early, so the
// lower bound holds on any machine.
func TestFailuresOfAnotherAlgorithmWaitForACheckAtTheSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHasher(t, Options{Algorithm: Argon2id, Argon2: Argon2Params{Memory: 4096, Iterations: 2, Parallelism: 1}})
	dummy, _, err := h.Hash(ctx, "the dummy password of unknown users")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Validate(ctx, ports.PasswordCheck{Password: "a wrong password", PasswordHash: dummy}); err != nil {
		t.Fatal(err)
	}
	ref := time.Duration(h.timing.ref.Load())
	if ref <= 0 {
		t.Fatal("no check at the setting was measured")
	}
	bcryptHash, _, err := newHasher(t, Options{BcryptCost: MinBcryptCost}).Hash(ctx, "the right password")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if ok, err := h.Validate(ctx, ports.PasswordCheck{Password: "a wrong password", PasswordHash: bcryptHash}); ok || err != nil {
		t.Fatalf("Validate = %v, %v", ok, err)
	}
	if took := time.Since(start); took < ref {
		t.Errorf("a wrong password against a bcrypt hash under argon2id took %v, less than a check at the setting (%v)", took, ref)
	}
}

// A password longer than bcrypt reads fails without hashing, for an
// unknown user too: such failures must not pull down the measured time
// of a check at the setting, which pads the failures of other hashes.
func TestUncheckedPasswordsDoNotMoveTheTimeReference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHasher(t, Options{BcryptCost: MinBcryptCost})
	dummy, _, err := h.Hash(ctx, "the dummy password of unknown users")
	if err != nil {
		t.Fatal(err)
	}
	ref := h.timing.ref.Load()
	for range 20 {
		if ok, err := h.Validate(ctx, ports.PasswordCheck{Password: strings.Repeat("x", 73), PasswordHash: dummy}); ok || err != nil {
			t.Fatalf("Validate = %v, %v", ok, err)
		}
	}
	if got := h.timing.ref.Load(); got != ref {
		t.Errorf("the time reference moved from %v to %v after unchecked passwords", time.Duration(ref), time.Duration(got))
	}
}
