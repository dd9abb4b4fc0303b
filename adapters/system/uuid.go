package system

import (
	"github.com/google/uuid"

	"github.com/cachegate/cachegate/ports"
)

// UUIDv7 makes UUIDv7 ids (RFC 9562) as lowercase canonical strings. Ids
// made in one process sort, as strings and as bytes, in the order they
// were made: google/uuid keeps a process-wide monotonic timestamp with a
// 12-bit sub-millisecond sequence.
type UUIDv7 struct{}

var _ ports.IDGenerator = UUIDv7{}

// NewID returns a new UUIDv7. uuid.NewV7 fails only when crypto/rand
// fails, which since Go 1.24 aborts the program instead.
func (UUIDv7) NewID() string { return uuid.Must(uuid.NewV7()).String() }
