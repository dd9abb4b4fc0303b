package application

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// IdempotencyLifetime is how long a create's Idempotency-Key answers its
// retries (README, "Idempotent retries"); the sweeper removes the record
// afterwards.
const IdempotencyLifetime = 24 * time.Hour

// MaxIdempotencyKeyBytes bounds an Idempotency-Key.
const MaxIdempotencyKeyBytes = 255

// IdempotencyKey is a client's Idempotency-Key on a create.
type IdempotencyKey struct {
	// Key is the key as the client meant it (ginhttp removes the quotes of
	// the header's string form), 1 to MaxIdempotencyKeyBytes bytes.
	Key string
	// RequestHash identifies the request: ginhttp gives the SHA-256 of
	// the body's bytes as received. Empty asks the use case to digest the
	// input itself (the Go API, which has no body).
	RequestHash string
}

// idempotencyScope is the scope of actor's keys in st: keys are unique per
// assignment and caller. Anonymous callers of a public assignment share one
// scope (they can read each other's entries anyway).
func idempotencyScope(st *Assignment, actor domain.Actor) string {
	switch {
	case actor.Authenticated():
		return st.Name + "/user:" + actor.Principal.ID
	case actor.IsSystem():
		return st.Name + "/system"
	default:
		return st.Name + "/anonymous"
	}
}

// check validates the key and fills in the request hash from c when the
// caller gave none.
func (k IdempotencyKey) check(c CacheInput) (IdempotencyKey, error) {
	if k.Key == "" || len(k.Key) > MaxIdempotencyKeyBytes {
		return k, domain.InvalidField("Idempotency-Key", fmt.Sprintf("must be 1 to %d bytes", MaxIdempotencyKeyBytes))
	}
	if k.RequestHash == "" {
		k.RequestHash = inputHash(c)
	}
	return k, nil
}

// inputHash digests a create's input for callers that have no request
// body: each field length-prefixed, so no two inputs share a digest.
func inputHash(c CacheInput) string {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field([]byte(c.Key))
	field([]byte(c.Type))
	field([]byte(c.AssigneeID))
	field(c.Data)
	if c.ExpiresIn == nil {
		h.Write([]byte{0})
	} else {
		h.Write([]byte{1})
		field([]byte(*c.ExpiresIn))
	}
	return "go:" + hex.EncodeToString(h.Sum(nil))
}

// replay answers a request whose key has rec: the first answer when the
// request is the same, ErrIdempotencyKeyReused when it is not.
func replay(rec ports.IdempotencyRecord, k IdempotencyKey) (domain.Entry, error) {
	if rec.RequestHash != k.RequestHash {
		return domain.Entry{}, domain.ErrIdempotencyKeyReused
	}
	return rec.Entry, nil
}

// createIdempotent stores e with the record of k, or answers as the
// record of k already stored says (replayed), also one a concurrent
// request committed first; one still in flight is
// domain.ErrIdempotencyKeyInProgress.
func (uc *CreateCache) createIdempotent(ctx context.Context, st *Assignment, repo ports.CacheRepository, actor domain.Actor, k IdempotencyKey,
	e domain.Entry, now time.Time,
) (domain.Entry, bool, error) {
	scope := idempotencyScope(st, actor)
	rec := ports.IdempotencyRecord{Scope: scope, Key: k.Key, RequestHash: k.RequestHash, Entry: e,
		ExpiresAt: now.Add(IdempotencyLifetime)}
	err := repo.CreateIdempotent(ctx, e, now, st.Quota, rec)
	if !errors.Is(err, domain.ErrIdempotencyKeyInProgress) {
		return e, false, err
	}
	prev, ok, lerr := repo.IdempotencyRecord(ctx, scope, k.Key, now)
	switch {
	case lerr != nil:
		return domain.Entry{}, false, lerr
	case !ok:
		return domain.Entry{}, false, err
	}
	e, err = replay(prev, k)
	return e, true, err
}
