package system

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	mrand "math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/cachegate/cachegate/ports"
	"github.com/google/uuid"
)

// UUIDv7 makes UUIDv7 ids (RFC 9562) as lowercase canonical strings. Ids
// made in one process sort, as strings and as bytes, in the order they
// were made: google/uuid keeps a process-wide monotonic timestamp with a
// 12-bit sub-millisecond sequence.
type UUIDv7 struct{}

var _ ports.IDGenerator = UUIDv7{}

// NewID returns a new UUIDv7. It never panics: uuid.NewV7 fails only when
// crypto/rand cannot be read, which since Go 1.24 aborts the program
// instead of returning an error; should it fail anyway, the random bits come
// from a ChaCha8 stream seeded from the clock and process id. Ids
// are identifiers, not secrets, so that keeps them unique and ordered.
func (UUIDv7) NewID() string { return newV7(rand.Reader) }

// newV7 makes a UUIDv7 whose random bits come from r, or from the
// fallback stream when r fails.
func newV7(r io.Reader) string {
	id, err := uuid.NewV7FromReader(r)
	if err != nil {
		id, err = uuid.NewV7FromReader(&fallback)
	}
	if err != nil {
		// Unreachable: the fallback reader never fails.
		id = uuid.Nil
	}
	return id.String()
}

// fallback is the random source used only when crypto/rand fails.
var fallback fallbackReader

// fallbackReader is a lazily seeded, mutex-guarded ChaCha8 stream.
type fallbackReader struct {
	mu sync.Mutex
	r  *mrand.ChaCha8
}

// Read fills p; it never fails.
func (f *fallbackReader) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.r == nil {
		var seed [32]byte
		binary.LittleEndian.PutUint64(seed[0:], uint64(time.Now().UnixNano()))
		binary.LittleEndian.PutUint64(seed[8:], uint64(os.Getpid()))
		binary.LittleEndian.PutUint64(seed[16:], mrand.Uint64())
		f.r = mrand.NewChaCha8(seed)
	}
	return f.r.Read(p)
}
