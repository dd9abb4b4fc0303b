package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Issue 13: a PostgreSQL primary with a synchronous streaming standby
// (pg_basebackup -R), the service on a multi-host URL with
// target_session_attrs=read-write. The primary is killed under write
// load and the standby promoted: meanwhile requests fail fast with 503
// and Retry-After, none hangs past the bound; the service recovers by
// itself within 15 s of the promotion, and no acknowledged write is lost.
func TestPostgreSQLFailoverToASynchronousStandbyLosesNoAcknowledgedWrite(t *testing.T) {
	t.Parallel()
	const (
		bound      = 2 * time.Second
		recoveryIn = 15 * time.Second
		outage     = 3 * time.Second // between the kill and the promotion
	)
	primary := newPGCluster(t, "wal_level = replica", "max_wal_senders = 4",
		"synchronous_standby_names = '*'", "synchronous_commit = on", "fsync = off")
	primary.start(t)

	standby := &pgCluster{bin: primary.bin, cred: primary.cred}
	standby.dir = standby.makeDir(t)
	standby.run(t, "pg_basebackup", "-h", "127.0.0.1", "-p", fmt.Sprint(primary.Port), "-U", "postgres",
		"-D", standby.data(), "-R", "-X", "stream", "--no-sync")
	// Its own socket directory, and no synchronous standby of its own once
	// promoted: otherwise, alone, it would hold every commit (the service
	// would answer 503 until one joins).
	standby.appendConf(t, "synchronous_standby_names = ''")
	standby.start(t)
	waitSyncStandby(t, primary)

	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.Port, standby.Port)
	s := startServer(t, serverConfig{YAML: publicYAML, Args: []string{"--database", url, "--database-timeout", bound.String()}})
	load := startWriteLoad(t, s.URL, 4, 100)
	load.waitAcked(t, 300, 30*time.Second)

	primary.kill()
	killedAt := time.Now()
	time.Sleep(outage)
	during := load.snapshot()
	ready := mustSend(t, newClient(), http.MethodGet, s.URL+"/readyz", nil)
	ackedAtPromotion := load.acked.Load()
	standby.run(t, "pg_ctl", "promote", "-D", standby.data(), "-w", "-t", "30")
	promotedAt := time.Now()

	load.waitAcked(t, ackedAtPromotion+100, recoveryIn)
	recovered := time.Since(promotedAt)
	load.finish()

	t.Logf("killed the primary, promoted the standby %s later; meanwhile %v; recovered %s after the promotion; longest request %s; %d entries acknowledged",
		promotedAt.Sub(killedAt).Round(time.Millisecond), during, recovered.Round(time.Millisecond),
		load.longest.Round(time.Millisecond), len(load.acks))
	if ready.Status != http.StatusServiceUnavailable || ready.errorCode() != "DATABASE_UNAVAILABLE" {
		t.Errorf("GET /readyz without a primary: %d %s; want 503 DATABASE_UNAVAILABLE", ready.Status, short(ready.Body))
	}
	if during[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no 503 while there was no primary: %v", during)
	}
	if load.longest > bound+faultSlack {
		t.Errorf("a request took %s; the bound is %s", load.longest, bound)
	}
	if len(load.bad) > 0 {
		t.Errorf("%d answers a failover must not give, e.g. %q", len(load.bad), load.bad[:min(3, len(load.bad))])
	}
	verifyAcks(t, s.URL, load.acks)
}

// waitSyncStandby waits until the primary streams to a synchronous standby.
func waitSyncStandby(t *testing.T, primary *pgCluster) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := primary.query("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'", &n)
		if err == nil && n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no synchronous standby within 30 s (%d, %v)", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
