package ports

import (
	"time"

	"github.com/cachegate/cachegate/domain"
)

// IdempotencyRecord ties an Idempotency-Key to the create it came with
// (README, "Idempotent retries"), stored in the create's own transaction
// (CacheRepository.CreateIdempotent).
type IdempotencyRecord struct {
	// Scope is who sent the key, and where: the assignment and the caller.
	// Keys are unique per scope.
	Scope string
	// Key is the client's Idempotency-Key, at most 255 bytes.
	Key string
	// RequestHash identifies the request the key first came with (a digest
	// of its body); a retry must carry the same.
	RequestHash string
	// Entry is the entry as created: the first answer, replayed to retries
	// whatever happened to the entry since.
	Entry domain.Entry
	// ExpiresAt is when the record stops answering and may be purged.
	ExpiresAt time.Time
}
