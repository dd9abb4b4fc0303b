package readcache

import (
	"encoding/binary"
	"os"
	"sync"
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

// shm reads the WAL-index header of one file. Reads may run concurrently.
type shm struct {
	f    *os.File
	info os.FileInfo
}

// shms are the "-shm" files this process opened, by name. None is ever
// closed: closing any descriptor of a file releases every POSIX lock the
// process holds on it (fcntl(2)), and SQLite's connections of this
// process hold theirs on this file through descriptors of their own; their
// locks are what keeps other processes from resetting the index under
// them. A name whose file was replaced (SQLite removes it when the
// file's last connection closes) gets a new descriptor; the old one stays
// open, read no more.
var shms struct {
	sync.Mutex
	m map[string]*shm
}

// openSHM returns a reader of the "-shm" file of the database file at
// path, the file that is there now.
func openSHM(path string) (*shm, error) {
	name := path + "-shm"
	now, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	shms.Lock()
	defer shms.Unlock()
	if s := shms.m[name]; s != nil && os.SameFile(s.info, now) {
		return s, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	s := &shm{f: f, info: info}
	if shms.m == nil {
		shms.m = map[string]*shm{}
	}
	shms.m[name] = s
	return s, nil
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
