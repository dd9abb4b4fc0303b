package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scaleEntries is how many entries the memory test moves.
const scaleEntries = 200_000

// maxArchiveRSS is the bound on the peak resident memory of export and
// import, whatever the size of the database (docs/operations.md,
// "Moving from SQLite to PostgreSQL": memory stays flat).
const maxArchiveRSS = 100 << 20

// TestExportAndImportOf200kEntriesStayUnder100MB imports a file of 200 000
// entries into SQLite and exports it again, each by the real binary, and
// reads the peak resident set size of each child (VmHWM) from /proc.
func TestExportAndImportOf200kEntriesStayUnder100MB(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeScaleExport(t, in, scaleEntries)
	db := "sqlite:" + filepath.Join(dir, "scale.db")

	rss, took := measureCLI(t, dir, "import", "--in", in, "--database", db)
	t.Logf("import of %d entries: %s, peak RSS %.1f MB", scaleEntries, took.Round(time.Millisecond), float64(rss)/(1<<20))
	if rss > maxArchiveRSS {
		t.Errorf("import peak RSS %d MB, want under %d MB", rss>>20, maxArchiveRSS>>20)
	}
	out := filepath.Join(dir, "out.jsonl")
	rss, took = measureCLI(t, dir, "export", "--out", out, "--database", db)
	t.Logf("export of %d entries: %s, peak RSS %.1f MB", scaleEntries, took.Round(time.Millisecond), float64(rss)/(1<<20))
	if rss > maxArchiveRSS {
		t.Errorf("export peak RSS %d MB, want under %d MB", rss>>20, maxArchiveRSS>>20)
	}
	if n := countEntryLines(t, out); n != scaleEntries {
		t.Errorf("the export holds %d entries, want %d", n, scaleEntries)
	}
}

// measureCLI runs the binary and returns its peak RSS in bytes (VmHWM,
// sampled every 20 ms while it runs) and how long it ran; it fails the
// test unless the command succeeds. The rusage's maximum RSS would not do:
// Go starts children with vfork, so the kernel charges them the test
// process's own high-water mark at exec.
func measureCLI(t *testing.T, dir string, args ...string) (int64, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = baseEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = childAttr()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if hwm := vmHWM(status); hwm > peak {
			peak = hwm
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("cachegate %s: %v\n%s", args[0], err, stderr.String())
			}
			if peak == 0 {
				t.Fatal("VmHWM was never read")
			}
			return peak, time.Since(start)
		case <-tick.C:
		}
	}
}

// vmHWM reads the VmHWM line of a /proc/PID/status file, in bytes; 0 when
// it cannot (the process is gone, or has not exec'ed yet and shows ours:
// then the value is the test's, which the caller's max would wrongly keep,
// so a status whose Name is not cachegate is skipped).
func vmHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte("Name:\tcachegate")) {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// writeScaleExport writes an export of n entries of one user, with data
// of a typical size.
func writeScaleExport(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	const at = "2026-01-02T03:04:05.678901Z"
	user := "01900000-0000-7000-8000-000000000001"
	fmt.Fprintf(w, `{"format":"cachegate-export","version":1,"exportedAt":%q}`+"\n", at)
	fmt.Fprintf(w, `{"kind":"user","id":%q,"username":"scale","passwordHash":"$2a$04$abcdefghijklmnopqrstuu5RxK6Xn8m8G6l2V7yVnqQ3R1V9X2dA6","passwordSalt":"","active":true,"dateCreated":%q,"dateUpdated":%q}`+"\n", user, at, at)
	for i := range n {
		fmt.Fprintf(w, `{"kind":"entry","entity":"userCache","id":"01900000-0000-7000-8000-%012d","key":"key-%d","type":"scale","assigneeId":%q,"version":1,"dateCreated":%q,"dateUpdated":%q,"expiresAt":null,"data":{"value":"some cached text of a typical size","n":%d}}`+"\n",
			i, i, user, at, at, i)
	}
	fmt.Fprintf(w, `{"kind":"end","records":%d}`+"\n", n+1)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func countEntryLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 1<<20), 1<<24)
	n := 0
	for s.Scan() {
		if bytes.HasPrefix(s.Bytes(), []byte(`{"kind":"entry"`)) {
			n++
		}
	}
	return n
}
