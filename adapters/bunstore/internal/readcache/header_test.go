package readcache

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"modernc.org/sqlite"
)

// TestHeaderSeesCommitsOfAnotherProcess: commits of another process (here
// this test binary again, as the CLI's import or a second server would
// be) change the header the watch reads, each of them.
func TestHeaderSeesCommitsOfAnotherProcess(t *testing.T) {
	if path := os.Getenv("READCACHE_TEST_WRITE"); path != "" {
		db := openPool(t, path)
		if _, err := db.Exec("INSERT INTO t VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, db := openFile(t, false)
	ctx := t.Context()
	var path string
	if err := db.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Now(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		before, err := w.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if before.State.hdr == (header{}) {
			t.Fatalf("state %+v not read from the header", before.State)
		}
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHeaderSeesCommitsOfAnotherProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "READCACHE_TEST_WRITE="+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the writing process: %v\n%s", err, out)
		}
		after, err := w.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.State == before.State || after.Seq <= before.Seq {
			t.Fatalf("commit %d of another process not seen: %+v after %+v", i, after, before)
		}
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("rows %d (%v), want 3", n, err)
	}
}

// TestHeaderAnswersReadersAfterCommitsOfAnotherProcess: readers reading a
// counter through a Cache while another process raises it never find a
// value older than the last commit that process reported done before they
// asked.
func TestHeaderAnswersReadersAfterCommitsOfAnotherProcess(t *testing.T) {
	if path := os.Getenv("READCACHE_TEST_COUNT"); path != "" {
		db := openPool(t, path)
		for i := 1; i <= 300; i++ {
			if _, err := db.Exec("UPDATE t SET v = ?", i); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("committed %d\n", i)
		}
		return
	}
	testReadersAfterCommits(t, false, func(ctx context.Context, db *sql.DB, acked *atomic.Int64) error {
		var path string
		if err := db.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHeaderAnswersReadersAfterCommitsOfAnotherProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "READCACHE_TEST_COUNT="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if v, ok := bytes.CutPrefix(lines.Bytes(), []byte("committed ")); ok {
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					return err
				}
				acked.Store(n)
			}
		}
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("the writing process: %w", err)
		}
		if acked.Load() != 300 {
			return fmt.Errorf("the writing process reported %d commits, want 300", acked.Load())
		}
		return nil
	})
}

// TestHeaderWhileTheWatchIsOpenTheFileStaysInWAL: what the header path
// rests on. Another connection cannot take the file out of WAL mode while
// the watch's connection is open, and its commits keep changing the
// header.
func TestHeaderWhileTheWatchIsOpenTheFileStaysInWAL(t *testing.T) {
	w, db := openFile(t, false)
	ctx := t.Context()
	if _, err := w.Now(ctx); err != nil {
		t.Fatal(err)
	}
	var mode string
	err := db.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode)
	t.Logf("PRAGMA journal_mode = DELETE: %q, %v", mode, err)
	if err == nil && mode != "wal" {
		t.Fatalf("journal mode %q with the watch open", mode)
	}
	before, _ := w.Now(ctx)
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	after, err := w.Now(ctx)
	if err != nil || before.State.hdr == (header{}) || after.State == before.State {
		t.Fatalf("commit not seen in the header: %+v after %+v (%v)", after, before, err)
	}
}

// TestHeaderReadTrustsOnlyAnAgreedValidHeader: a header is read only when
// both copies agree, it is initialised, of the known version, and its
// checksum is right; else the watch asks the file.
func TestHeaderReadTrustsOnlyAnAgreedValidHeader(t *testing.T) {
	good := validHeader(7)
	cases := map[string]func(b []byte){
		"copies differ":    func(b []byte) { b[headerSize+8]++ },
		"not initialised":  func(b []byte) { b[12], b[headerSize+12] = 0, 0 },
		"another version":  func(b []byte) { setBoth(b, 0, 3007001) },
		"a wrong checksum": func(b []byte) { setBoth(b, 40, 1) },
		"a short file":     nil,
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			b := append(good[:], good[:]...)
			if spoil != nil {
				spoil(b)
			} else {
				b = b[:headerSize+10]
			}
			if h, ok := readFile(t, b); ok {
				t.Fatalf("read %v", h)
			}
		})
	}
	h, ok := readFile(t, append(good[:], good[:]...))
	if !ok || h != good {
		t.Fatalf("valid header read as %v, %v", h, ok)
	}
}

// validHeader returns a header of the known format with the change
// counter n and its checksum.
func validHeader(n uint32) header {
	var h header
	binary.NativeEndian.PutUint32(h[0:], walIndexVersion)
	binary.NativeEndian.PutUint32(h[8:], n)
	h[12] = 1
	binary.NativeEndian.PutUint16(h[14:], 4096)
	s1, s2 := checksum(h[:40])
	binary.NativeEndian.PutUint32(h[40:], s1)
	binary.NativeEndian.PutUint32(h[44:], s2)
	return h
}

// checksum is SQLite's walChecksumBytes over b in native byte order, with
// no checksum before it (walformat.html, "Checksums").
func checksum(b []byte) (s1, s2 uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s1 += binary.NativeEndian.Uint32(b[i:]) + s2
		s2 += binary.NativeEndian.Uint32(b[i+4:]) + s1
	}
	return s1, s2
}

func setBoth(b []byte, off int, v uint32) {
	binary.NativeEndian.PutUint32(b[off:], v)
	binary.NativeEndian.PutUint32(b[headerSize+off:], v)
}

// readFile reads the header of a file holding b (not through openSHM,
// whose descriptors stay open).
func readFile(t testing.TB, b []byte) (header, bool) {
	name := filepath.Join(t.TempDir(), "x.db-shm")
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return (&shm{f: f}).read()
}

// FuzzHeaderRead: any file content is read without a panic, and a header
// is trusted only with both copies equal and a valid checksum.
func FuzzHeaderRead(f *testing.F) {
	good := validHeader(3)
	f.Add(append(good[:], good[:]...))
	f.Add(bytes.Repeat([]byte{1}, 2*headerSize))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := readFile(t, b)
		if !ok {
			return
		}
		s1, s2 := checksum(h[:40])
		if len(b) < 2*headerSize || !bytes.Equal(h[:], b[:headerSize]) || !bytes.Equal(b[:headerSize], b[headerSize:2*headerSize]) ||
			h[12] != 1 || binary.NativeEndian.Uint32(h[0:]) != walIndexVersion ||
			binary.NativeEndian.Uint32(h[40:]) != s1 || binary.NativeEndian.Uint32(h[44:]) != s2 {
			t.Fatalf("trusted %v from %v", h, b)
		}
	})
}

// TestHeaderOfAFileOpenedAgain: when every connection of a file closed
// (SQLite then removes its "-shm" file) and the file is opened again, the
// watch reads the new index, not the one it read before.
func TestHeaderOfAFileOpenedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "again.db")
	ctx := t.Context()
	for round := range 3 {
		db := openPool(t, path)
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS t (v INTEGER)"); err != nil {
			t.Fatal(err)
		}
		conn, err := sqlite.NewConnector(fileURI(path))
		if err != nil {
			t.Fatal(err)
		}
		w := NewWatch(conn)
		for i := range 3 {
			before, err := w.Now(ctx)
			if err != nil || before.State.hdr == (header{}) {
				t.Fatalf("opening %d: state %+v, %v: not read from the header", round, before, err)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?)", i); err != nil {
				t.Fatal(err)
			}
			if after, err := w.Now(ctx); err != nil || after.State == before.State {
				t.Fatalf("opening %d: commit %d not seen: %+v after %+v (%v)", round, i, after, before, err)
			}
		}
		_ = w.Close()
		_ = db.Close()
		if _, err := os.Stat(path + "-shm"); err == nil {
			t.Logf("opening %d: the index outlived its connections", round)
		}
	}
}
