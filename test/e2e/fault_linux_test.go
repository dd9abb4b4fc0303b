package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 13: an outage of the database answers 503 DATABASE_UNAVAILABLE (or
// 507 STORAGE_FULL) fast, with Retry-After, never 500 and never a hang;
// the service recovers by itself, and no acknowledged write is lost.

// faultSlack is what a loaded two-core machine may add to the database
// bound before a request is answered; a request held for the outage would
// take the whole outage, which is longer than bound + faultSlack.
const faultSlack = 2 * time.Second

func TestAFrozenPostgreSQLAnswers503WithinTheBoundAndRecoversAtSIGCONT(t *testing.T) {
	t.Parallel()
	const (
		bound  = time.Second
		freeze = 5 * time.Second
	)
	pg := newPGCluster(t, "fsync = off", "synchronous_commit = on")
	pg.start(t)
	s := startServer(t, serverConfig{YAML: publicYAML,
		Args: []string{"--database", pg.URL("postgres"), "--database-timeout", "1s"}})
	load := startWriteLoad(t, s.URL, 6, 100)
	load.waitAcked(t, 200, 30*time.Second)

	pg.freeze()
	frozenAt := time.Now()
	t.Cleanup(pg.thaw) // whatever happens below
	client := &http.Client{Timeout: 10 * time.Second}
	time.Sleep(bound + 500*time.Millisecond)
	ready := mustSend(t, client, http.MethodGet, s.URL+"/readyz", nil)
	if ready.Status != http.StatusServiceUnavailable || ready.errorCode() != "DATABASE_UNAVAILABLE" {
		t.Errorf("GET /readyz while frozen: %d %s; want 503 DATABASE_UNAVAILABLE", ready.Status, short(ready.Body))
	}
	time.Sleep(time.Until(frozenAt.Add(freeze)))
	during := load.snapshot()
	ackedAtThaw := load.acked.Load()
	pg.thaw()
	thawedAt := time.Now()

	load.waitAcked(t, ackedAtThaw+100, 15*time.Second)
	recovered := time.Since(thawedAt)
	waitStatus(t, s.URL+"/readyz", http.StatusOK, 10*time.Second)
	load.finish()

	t.Logf("frozen %s; during the freeze: %v; recovered %s after SIGCONT; longest request %s; %d entries acknowledged",
		freeze, during, recovered.Round(time.Millisecond), load.longest.Round(time.Millisecond), len(load.acks))
	if during[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no 503 while the database was frozen: %v", during)
	}
	if load.longest > bound+faultSlack {
		t.Errorf("a request took %s; the bound is %s", load.longest, bound)
	}
	if len(load.bad) > 0 {
		t.Errorf("%d answers an outage must not give, e.g. %q", len(load.bad), load.bad[:min(3, len(load.bad))])
	}
	assertOutageLoggedSparingly(t, s, load.snapshot()[http.StatusServiceUnavailable])
	verifyAcks(t, s.URL, load.acks)
}

// TestAFullDiskOnSQLiteIs507WhileReadsGoOnAndRecovers fills a real
// filesystem: a small tmpfs mounted for the test (root only), grown again
// with a remount to give the space back.
func TestAFullDiskOnSQLiteIs507WhileReadsGoOnAndRecovers(t *testing.T) {
	t.Parallel()
	dir := mountSmallTmpfs(t, "3m")
	s := startServer(t, serverConfig{YAML: publicYAML, Args: []string{"--database", "sqlite:" + filepath.Join(dir, "full.db")}})
	load := startWriteLoad(t, s.URL, 4, 4000)
	deadline := time.Now().Add(60 * time.Second)
	for load.snapshot()[http.StatusInsufficientStorage] < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("no 507 within a minute of filling a 3 MiB disk: %v", load.snapshot())
		}
		time.Sleep(20 * time.Millisecond)
	}
	load.finish()
	full := load.snapshot()
	acks := append([]ack(nil), load.acks...)

	// Reads are served while the disk is full.
	verifyAcks(t, s.URL, acks)
	client := newClient()
	ready := mustSend(t, client, http.MethodGet, s.URL+"/readyz", nil)
	if ready.Status != http.StatusServiceUnavailable || ready.errorCode() != "STORAGE_FULL" {
		t.Errorf("GET /readyz on a full disk: %d %s; want 503 STORAGE_FULL", ready.Status, short(ready.Body))
	}

	// Space returns: writes and readiness recover by themselves.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount bigger: %v %s", err, out)
	}
	freed := time.Now()
	waitStatus(t, s.URL+"/readyz", http.StatusOK, 15*time.Second)
	after := startWriteLoad(t, s.URL, 4, 4000)
	after.waitAcked(t, 50, 15*time.Second)
	after.finish()
	t.Logf("full: %v; ready again %s after space returned; %d + %d entries acknowledged",
		full, time.Since(freed).Round(time.Millisecond), len(acks), len(after.acks))
	for _, l := range []*writeLoad{load, after} {
		if len(l.bad) > 0 {
			t.Errorf("%d answers a full disk must not give, e.g. %q", len(l.bad), l.bad[:min(3, len(l.bad))])
		}
	}
	assertOutageLoggedSparingly(t, s, full[http.StatusInsufficientStorage])

	// Every acknowledged entry is in the file: restart on it and read.
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
	s2 := startServer(t, serverConfig{YAML: publicYAML, Args: []string{"--database", "sqlite:" + filepath.Join(dir, "full.db")}})
	verifyAcks(t, s2.URL, append(acks, after.acks...))
}

// mountSmallTmpfs mounts a tmpfs of size (mount's syntax) on a new
// directory and unmounts it at cleanup. Mounting needs root (and a
// container allowed to mount); without it the test skips, loudly.
func mountSmallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED, NOT ROOT: a real full disk needs a tmpfs mounted as root")
	}
	dir, err := os.MkdirTemp("", "cachegate-e2e-full-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		_ = os.Remove(dir)
		t.Skipf("SKIPPED, CANNOT MOUNT A TMPFS (%v: %s): a real full disk needs one", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		_ = exec.Command("umount", "-l", dir).Run()
		_ = os.Remove(dir)
	})
	return dir
}

// waitStatus polls url until it answers status.
func waitStatus(t *testing.T, url string, status int, bound time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(bound)
	for {
		r, err := send(client, http.MethodGet, url, nil)
		if err == nil && r.Status == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s did not answer %d within %s (last: %d %s %v)", url, status, bound, r.Status, short(r.Body), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// assertOutageLoggedSparingly checks that failures answered to many
// requests were logged as a few lines with counts, not one per request.
func assertOutageLoggedSparingly(t *testing.T, s *server, answered int) {
	t.Helper()
	lines := s.log.lines("database failure")
	if len(lines) == 0 {
		t.Errorf("the outage was never logged")
		return
	}
	if answered >= 50 && len(lines) > answered/10 {
		t.Errorf("%d failures answered, %d log lines: want a few lines with counts", answered, len(lines))
	}
	// Their access lines too: one per 10 s per identity, with repeated=.
	access := s.log.lines("msg=request", "status=50")
	if answered >= 50 && len(access) > answered/10 {
		t.Errorf("%d failures answered, %d access lines: want a few lines with counts", answered, len(access))
	}
	// The background loops log when they start failing and when they
	// recover, not at each failed poll (two: slack for one flap).
	for _, loop := range []string{"change feed: read failing", "read revoked sessions failing", "reload signing keys failing"} {
		if n := len(s.log.lines(loop)); n > 2 {
			t.Errorf("%q logged %d times during one outage", loop, n)
		}
	}
	t.Logf("%d outage answers, %d log lines about them, %d access lines", answered, len(lines), len(access))
}
