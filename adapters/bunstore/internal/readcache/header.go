package readcache

import (
	"encoding/binary"
	"os"
)

// header is the WAL-index header of an SQLite file in WAL mode: the first
// 48 bytes of its "-shm" file, which every commit rewrites before it
// returns (https://www.sqlite.org/walformat.html, "The WAL-Index Header").
// Its change counter, frame count, salts and checksum differ after any
// commit, so two equal headers read at two times mean no commit happened
// in between; SQLite's own connections decide by this comparison whether
// their page cache is still valid. The zero header is no header.
type header [headerSize]byte

const (
	headerSize = 48
	// walIndexVersion is the iVersion field of the format this reads.
	walIndexVersion = 3007000
	// headerReads is how often a torn read (a commit writing the header
	// meanwhile) is retried before the reader asks the file instead.
	headerReads = 4
)

// shm reads the WAL-index header of one file. Reads may run concurrently
// and after Close, which makes them fail.
type shm struct {
	f *os.File
	// epoch is that of the watch's connection the file was opened for:
	// headers are compared within one epoch only.
	epoch uint64
}

// openSHM opens the "-shm" file of the database file at path for reading.
func openSHM(path string, epoch uint64) (*shm, error) {
	f, err := os.Open(path + "-shm")
	if err != nil {
		return nil, err
	}
	return &shm{f: f, epoch: epoch}, nil
}

// read returns the current header, or false when there is none to trust:
// the file is closed or shorter, the header is not initialised, or its
// two copies never agreed with a valid checksum in headerReads tries.
//
// SQLite writes the second copy, then the first; a reader that finds
// both equal and the checksum right has a header no commit was writing
// (walformat.html; the same test SQLite's readers make).
func (s *shm) read() (header, bool) {
	var b [2 * headerSize]byte
	for range headerReads {
		if n, err := s.f.ReadAt(b[:], 0); n != len(b) || err != nil {
			return header{}, false
		}
		h := header(b[:headerSize])
		if h == header(b[headerSize:]) && h.valid() {
			return h, true
		}
	}
	return header{}, false
}

// valid reports whether h is an initialised header of the known format
// with the checksum SQLite wrote over its first 40 bytes (native byte
// order, as the WAL index is written).
func (h *header) valid() bool {
	u := func(i int) uint32 { return binary.NativeEndian.Uint32(h[4*i:]) }
	if u(0) != walIndexVersion || h[12] != 1 {
		return false
	}
	var s1, s2 uint32
	for i := 0; i < 10; i += 2 {
		s1 += u(i) + s2
		s2 += u(i+1) + s1
	}
	return s1 == u(10) && s2 == u(11)
}

// Close closes the file; later reads fail.
func (s *shm) Close() error { return s.f.Close() }
