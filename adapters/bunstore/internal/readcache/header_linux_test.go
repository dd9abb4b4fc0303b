package readcache

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestClosingTheWatchKeepsSQLiteLocks: closing a descriptor of a file
// releases every POSIX lock the process holds on it, so a watch that
// closed its "-shm" file would take away the locks SQLite's connections
// of the process hold there, and another process could reset the index
// under them. After the watch is closed, another process still finds the
// pool's lock on the index (the dead-man switch byte of SQLite's unix
// VFS, 128).
func TestClosingTheWatchKeepsSQLiteLocks(t *testing.T) {
	if name := os.Getenv("READCACHE_TEST_LOCK"); name != "" {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 128, Len: 1}
		if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("lock %d\n", lk.Type)
		return
	}
	w, db := openFile(t, false)
	ctx := t.Context()
	if s, err := w.Now(ctx); err != nil || s.State.hdr == (header{}) {
		t.Fatalf("state %+v, %v: not read from the header", s, err)
	}
	var path string
	if err := db.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path); err != nil {
		t.Fatal(err)
	}
	lock := func() string {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestClosingTheWatchKeepsSQLiteLocks$", "-test.count=1")
		cmd.Env = append(os.Environ(), "READCACHE_TEST_LOCK="+path+"-shm")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the other process: %v", err)
		}
		line, _, _ := strings.Cut(string(out), "\n")
		return line
	}
	unlocked := fmt.Sprintf("lock %d", syscall.F_UNLCK)
	if got := lock(); got == unlocked {
		t.Fatalf("the pool holds no lock on the index with the watch open: %q", got)
	}
	_ = w.Close()
	if got := lock(); got == unlocked {
		t.Fatal("the pool's lock on the index went with the watch")
	}
}
