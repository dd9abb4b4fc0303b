package e2e

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// walkthrough is the walk-through block of README.md, its port swapped
// for addr and its build step for a copy of the test's binary.
func walkthrough(t *testing.T, addr string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- walkthrough:start -->\\s*```sh\n(.*?)```\\s*<!-- walkthrough:end -->").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no walk-through block between the walkthrough markers")
	}
	script := string(block[1])
	for old, repl := range map[string]string{
		"ADDR=127.0.0.1:8089": "ADDR=" + addr,
		`go build -tags nomsgpack,grpcnotrace -o "$WORK/cachegate" ./cmd/cachegate`: "cp " + binary + ` "$WORK/cachegate"`,
	} {
		if !strings.Contains(script, old) {
			t.Fatalf("the walk-through no longer contains %q; update this test with it", old)
		}
		script = strings.Replace(script, old, repl, 1)
	}
	return script
}

// runScript runs script with bash -euo pipefail in dir, with TMPDIR set
// to tmp, and returns its output without tokens and its error.
func runScript(t *testing.T, script, dir, tmp string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Whatever happens, the server the script started in the background
	// must not outlive it (it would also hold the output pipe open).
	script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = groupAttr()
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	if err == nil {
		// Even if bash itself is killed (timeout), the server it started
		// in the background goes with its process group.
		defer killGroup(cmd.Process.Pid)
		err = cmd.Wait()
	}
	// The output holds tokens only inside answers the script prints;
	// show it without them.
	return regexp.MustCompile(`eyJ[A-Za-z0-9_.-]+`).ReplaceAllString(out.String(), "<token>"), err
}

// TestREADMEWalkthroughWorksAsWritten runs the walk-through block of
// README.md with bash against the real binary: the same commands a
// newcomer types, with only the port and the build step swapped for the
// test's. It leaves nothing behind, neither where it ran nor in its
// temporary directory.
func TestREADMEWalkthroughWorksAsWritten(t *testing.T) {
	t.Parallel()
	dir, tmp := t.TempDir(), t.TempDir()
	shown, err := runScript(t, walkthrough(t, freeAddr(t)), dir, tmp)
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", err, shown)
	}
	for _, d := range []string{dir, tmp} {
		if left, _ := os.ReadDir(d); len(left) > 0 {
			t.Errorf("the walk-through left %d files in %s, the first %s", len(left), d, left[0].Name())
		}
	}
	for _, want := range []string{`etag: "1"`, `"version":2`, "412", `"version":3`, `"pageCount":1`, "404", "204"} {
		if !strings.Contains(strings.ToLower(shown), strings.ToLower(want)) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, shown)
		}
	}
}

// With its port held by another server that answers /readyz, the
// walk-through stops at once and says why, instead of talking to that
// server or waiting forever.
func TestREADMEWalkthroughFailsLoudlyWhenItsPortIsTaken(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(other.Close)
	start := time.Now()
	shown, err := runScript(t, walkthrough(t, other.Listener.Addr().String()), t.TempDir(), t.TempDir())
	if err == nil {
		t.Fatalf("the walk-through succeeded with its port taken:\n%s", shown)
	}
	if !strings.Contains(shown, "cachegate did not start; its log:") || !strings.Contains(shown, "address already in use") {
		t.Errorf("the walk-through failed without saying why:\n%s", shown)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the walk-through took %s to give up", took)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
