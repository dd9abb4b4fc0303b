package passhash

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cachegate/cachegate/domain"
)

// Equal time for unknown users (ARCHITECTURE.md, "Threat model", "User
// enumeration"). An unknown user is checked against a dummy hash at the
// current setting, and a failed check of a weaker stored hash is padded to
// the cost of a check at the setting: by work where it can (the missing
// bcrypt rounds; the missing argon2id blocks, same lanes), which stays
// equal under any load, else by sleeping to a moving average of the checks
// run at the setting. Successful checks and hashes stronger than the
// setting are knowingly not padded; a password longer than a check at the
// setting hashes fails unhashed, neither padded nor measured.

// ewmaShift weighs a new measurement 1/8 in the moving average.
const ewmaShift = 3

// timing is the reference duration of a check at the current setting.
type timing struct{ ref atomic.Int64 } // nanoseconds; 0 until measured

// observe adds a measured check (or hash) at the current setting.
func (t *timing) observe(d time.Duration) {
	for {
		old := t.ref.Load()
		next := int64(d)
		if old != 0 {
			next = old + (int64(d)-old)>>ewmaShift
		}
		if t.ref.CompareAndSwap(old, next) {
			return
		}
	}
}

// pad sleeps until elapsed reaches the reference, or ctx ends.
func (t *timing) pad(ctx context.Context, elapsed time.Duration) {
	rest := time.Duration(t.ref.Load()) - elapsed
	if rest <= 0 {
		return
	}
	timer := time.NewTimer(rest)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// strength compares a stored hash with the current setting: -1 weaker
// (or another algorithm), 0 the setting itself, +1 stronger. A hash that
// does not parse is -1; it fails before any work.
func (h *Hasher) strength(hash string) int {
	if h.NeedsRehash(hash) {
		return -1
	}
	switch h.alg {
	case Argon2id:
		a, err := parseArgon2id(hash)
		if err != nil {
			return -1
		}
		if h.argon2.weakerThan(a.params) || a.params.Parallelism != h.argon2.Parallelism {
			return 1
		}
	default:
		cost, err := parseBcrypt(hash, h.bcryptVerifyLimit())
		if err != nil {
			return -1
		}
		if cost > h.bcryptCost {
			return 1
		}
	}
	return 0
}

// maxPasswordBytes is the longest password a check at the setting
// hashes; a longer one fails at once.
func (h *Hasher) maxPasswordBytes() int {
	if h.alg == Bcrypt {
		return maxBcryptPasswordBytes
	}
	return domain.MaxPasswordBytes
}

// padFailure brings a failed check of hash, which took elapsed, to the
// cost of a check at the setting; password is at most maxPasswordBytes
// long.
func (h *Hasher) padFailure(ctx context.Context, hash, password string, elapsed time.Duration) {
	switch alg := detect(hash); {
	case h.alg == Bcrypt && alg == Bcrypt:
		cost, err := parseBcrypt(hash, h.bcryptVerifyLimit())
		if err == nil {
			// Costs s..S-1 run 2^S - 2^s rounds: what a check at S does beyond s.
			for c := cost; c < h.bcryptCost && ctx.Err() == nil; c++ {
				_, _ = bcrypt.GenerateFromPassword([]byte(password), c)
			}
			return
		}
	case h.alg == Argon2id && alg == Argon2id:
		a, err := parseArgon2id(hash)
		if err == nil && a.params.Parallelism == h.argon2.Parallelism {
			h.padArgon2id(password, a.params)
			return
		}
	}
	h.timing.pad(ctx, elapsed)
}

// padArgon2id computes, after a failed check of an argon2id hash made
// with stored, the blocks a check at the setting computes beyond it: one
// argon2id run over the missing count of memory × iterations, with as
// few passes as keep its memory within the setting's. argon2id rounds
// memory down to 4 KiB per lane (and up to 8 KiB per lane), so the count
// is exact to 4 KiB per lane and pass.
func (h *Hasher) padArgon2id(password string, stored Argon2Params) {
	set := h.argon2
	want, done := argon2Blocks(set), argon2Blocks(stored)
	if done >= want {
		return
	}
	missing := want - done
	passes := (missing + uint64(set.Memory) - 1) / uint64(set.Memory)
	lane := 4 * uint64(set.Parallelism)
	memory := missing / passes / lane * lane
	if memory < 2*lane {
		return // less than one argon2id run's least memory: negligible
	}
	_ = h.argon2Key([]byte(password), make([]byte, set.SaltLength), uint32(passes), uint32(memory), set.Parallelism, set.KeyLength)
}

// argon2Blocks is how many 1 KiB blocks an argon2id run with p computes.
func argon2Blocks(p Argon2Params) uint64 { return uint64(p.Memory) * uint64(p.Iterations) }
