package e2e

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/pgtest"
)

// Issue 26: `migrate` right after a killed `migrate` succeeds on
// PostgreSQL. The killed migrator's last statement goes on running on its
// backend after its advisory lock is gone with its session; the next
// migrator meets what it creates and must run again rather than fail
// (adapters/bunstore/migrate.go). Each round migrates a fresh database,
// kills the migrator with SIGKILL after a random delay within the time a
// whole migration takes, and requires the next migrate to succeed at once.
func TestMigrateAfterAKilledMigrateSucceeds(t *testing.T) {
	t.Parallel()
	// How long one migration of an empty database takes here: the kills
	// are spread over it.
	start := time.Now()
	if r := runCLI(t, t.TempDir(), "", nil, "migrate", "--database", pgtest.New(t)); r.Code != 0 {
		t.Fatalf("migrate: status %d: %s", r.Code, r.Stderr)
	}
	whole := time.Since(start)
	const rounds = 20
	for i := range rounds {
		url := pgtest.New(t)
		delay := rand.N(whole)
		killMigrateAfter(t, url, delay)
		if r := runCLI(t, t.TempDir(), "", nil, "migrate", "--database", url); r.Code != 0 {
			t.Fatalf("round %d: migrate after a migrate killed at %v of %v: status %d: %s", i, delay, whole, r.Code, r.Stderr)
		}
	}
}

// killMigrateAfter starts `cachegate migrate` on url and kills it with
// SIGKILL after delay (or lets it end, if it ends first).
func killMigrateAfter(t *testing.T, url string, delay time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "migrate", "--database", url)
	cmd.Dir = t.TempDir()
	cmd.Env = append(baseEnv(), fastHashing)
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start migrate: %v", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(delay):
	}
	_ = cmd.Process.Kill()
	<-done
}
