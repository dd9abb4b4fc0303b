package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// The linearizability check of issue 33 under faults; the model, the
// clients and what is checked are described in linearizable_test.go.

// linClients is how many clients send at once.
const linClients = 6

// linFaultMax bounds the interval between two faults.
const linFaultMax = 5 * time.Second

// linFaultEvery is the interval between two faults in a history of d: a
// quarter of it (three faults in a short run), at most linFaultMax.
func linFaultEvery(d time.Duration) time.Duration { return min(d/4, linFaultMax) }

// linCheckTimeout bounds Porcupine's search.
func linCheckTimeout(d time.Duration) time.Duration { return max(2*time.Minute, 2*d) }

// linServerArgs are the flags of every server of these tests: a fixed
// port, so a restarted server is where its clients look, and no budget of
// database time, so the clients (one address) are not paced with 429s.
func linServerArgs(port int, more ...string) []string {
	return append([]string{"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--database-user-time", "0"}, more...)
}

// TestLinearizableUnderSIGKILLOnSQLite: one server on an SQLite file,
// killed with SIGKILL and started again on the same file every quarter
// of the history (every 5 s in longer runs).
func TestLinearizableUnderSIGKILLOnSQLite(t *testing.T) {
	t.Parallel()
	d := *linearDuration
	dir := t.TempDir()
	port := freePort(t)
	cfg := serverConfig{Dir: dir, YAML: publicYAML,
		Args: linServerArgs(port, "--database", "sqlite:"+filepath.Join(dir, "linear.db"))}
	s := startServer(t, cfg)
	w := newLinWorkload(t, []string{s.URL}, 3)

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	wait := w.run(ctx, linClients)
	kills := 0
	for next := linFaultEvery(d); next < d-linFaultEvery(d)/2; next += linFaultEvery(d) {
		time.Sleep(time.Until(w.start.Add(next)))
		s.kill(t)
		kills++
		s = startServer(t, cfg)
	}
	<-ctx.Done()
	wait()
	w.finalReads()
	t.Logf("SQLite: %d SIGKILLs and restarts", kills)
	w.report(t)
	linCheck(t, w.history, linCheckTimeout(d))
}

// TestLinearizableUnderSIGKILLOfReplicasAndADatabaseRestartOnPostgreSQL:
// two replicas on one PostgreSQL server of the test's own, the clients
// spread over both. Faults take turns, one every quarter of the history
// (every 5 s in longer runs): SIGKILL of one replica and a start again,
// SIGKILL of the whole database server (postmaster and every backend, a
// crash) and a start again on the same data, then SIGKILL of the other
// replica.
func TestLinearizableUnderSIGKILLOfReplicasAndADatabaseRestartOnPostgreSQL(t *testing.T) {
	t.Parallel()
	d := *linearDuration
	// fsync off: only the machine's crash could lose what it would keep;
	// the server's own (SIGKILL) cannot.
	pg := newPGCluster(t, "fsync = off", "synchronous_commit = on")
	pg.start(t)
	cfgs := make([]serverConfig, 2)
	replicas := make([]*server, 2)
	for i := range cfgs {
		cfgs[i] = serverConfig{YAML: publicYAML, Args: linServerArgs(freePort(t),
			"--database", pg.URL("postgres"), "--database-timeout", "2s")}
		replicas[i] = launch(t, cfgs[i])
	}
	urls := make([]string, 2)
	for i, s := range replicas {
		if err := s.waitReady(); err != nil {
			t.Fatalf("start replica %d: %v", i, err)
		}
		urls[i] = s.URL
	}
	w := newLinWorkload(t, urls, 3)

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	wait := w.run(ctx, linClients)
	var done []string
	replicaKills := 0
	for next, n := linFaultEvery(d), 0; next < d-linFaultEvery(d)/2; next, n = next+linFaultEvery(d), n+1 {
		time.Sleep(time.Until(w.start.Add(next)))
		switch n % 3 {
		case 0, 2:
			i := replicaKills % 2
			replicaKills++
			replicas[i].kill(t)
			replicas[i] = startServer(t, cfgs[i])
			done = append(done, fmt.Sprintf("replica %d", i))
		case 1:
			pg.kill()
			pg.KeepPort = true
			pg.start(t)
			done = append(done, "database")
		}
	}
	<-ctx.Done()
	wait()
	w.finalReads()
	t.Logf("PostgreSQL: SIGKILL and start of %v", done)
	w.report(t)
	linCheck(t, w.history, linCheckTimeout(d))
}
