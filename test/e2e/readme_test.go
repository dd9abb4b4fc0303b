package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADMEWalkthroughWorksAsWritten runs the walk-through block of
// README.md with bash against the real binary: the same commands a
// newcomer types, with only the port and the build step swapped for the
// test's.
func TestREADMEWalkthroughWorksAsWritten(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- walkthrough:start -->\\s*```sh\n(.*?)```\\s*<!-- walkthrough:end -->").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no walk-through block between the walkthrough markers")
	}
	script := string(block[1])
	addr := freeAddr(t)
	for old, repl := range map[string]string{
		"BASE=http://127.0.0.1:8080":                                        "BASE=http://" + addr,
		"go build -tags nomsgpack,grpcnotrace -o cachegate ./cmd/cachegate": "cp " + binary + " cachegate",
	} {
		if !strings.Contains(script, old) {
			t.Fatalf("the walk-through no longer contains %q; update this test with it", old)
		}
		script = strings.Replace(script, old, repl, 1)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Whatever happens, the server the script started in the background
	// must not outlive it (it would also hold the output pipe open).
	script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = groupAttr()
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), "CACHEGATE_ADDR="+addr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	if err == nil {
		// Even if bash itself is killed (timeout), the server it started
		// in the background goes with its process group.
		defer killGroup(cmd.Process.Pid)
		err = cmd.Wait()
	}
	// The output holds tokens only inside answers the script prints;
	// show it on failure without them.
	shown := regexp.MustCompile(`eyJ[A-Za-z0-9_.-]+`).ReplaceAllString(out.String(), "<token>")
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", err, shown)
	}
	for _, want := range []string{`etag: "1"`, `"version":2`, "412", `"version":3`, `"pageCount":1`, "404", "204"} {
		if !strings.Contains(strings.ToLower(shown), strings.ToLower(want)) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, shown)
		}
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
