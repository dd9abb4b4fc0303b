package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Issue 25: the npm SSE clients `eventsource` and
// `@microsoft/fetch-event-source` resume the change feed across a restart
// of the server (test/rockets/feed_restart.js says how each runs). The
// server is stopped with SIGTERM while both read, started again on the
// same address and database; changes are written before they come back
// (the stream's retry: is 2 s), and both must reconnect by themselves
// with Last-Event-ID and get every change exactly once, those by replay. On SQLite and
// PostgreSQL; without node and npm it skips loudly, and fails under
// CI=true.
func TestRealSSEClientsResumeAcrossARestart(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	app := rocketsProject.install(t, npm)
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			dbURL, _, _ := db.open(t, dir)
			const username, password = "restarty", "restart-password-1"
			if r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", username,
				"--password-stdin", "--database", dbURL); r.Code != 0 {
				t.Fatalf("users add: exit %d: %s", r.Code, r.Stderr)
			}
			addr := freeLoopbackAddr(t)
			cfg := serverConfig{Dir: dir, Args: []string{"--database", dbURL, "--addr", addr,
				"--events-retry", "2s"}}
			s := startServer(t, cfg)

			ctx, cancel := context.WithTimeout(context.Background(), feedBound)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "feed_restart.js")
			cmd.Dir = app
			cmd.Env = append(os.Environ(), "CACHEGATE_URL=http://"+addr,
				"CACHEGATE_USERNAME="+username, "CACHEGATE_PASSWORD="+password)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			restarted := false
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := sc.Text()
				out.WriteString(line + "\n")
				if line != "RESTART now" || restarted {
					continue
				}
				if code := s.stop(t); code != 0 {
					t.Errorf("the first server exited %d after SIGTERM, want 0", code)
				}
				s = startServer(t, cfg)
				if !strings.HasSuffix(s.URL, addr) {
					t.Fatalf("the server came back on %s, want %s", s.URL, addr)
				}
				restarted = true
				_, _ = io.WriteString(stdin, "restarted\n")
			}
			_ = stdin.Close()
			err = cmd.Wait()
			steps := out.String() + stderr.String()
			if ctx.Err() != nil {
				t.Fatalf("feed_restart.js did not finish within %s:\n%s", feedBound, steps)
			}
			if err != nil || !restarted || !strings.Contains(steps, "restart complete") {
				t.Fatalf("feed_restart.js failed (%v, restarted %v); its steps:\n%s", err, restarted, steps)
			}
			t.Logf("feed_restart.js's steps:\n%s", steps)
			// Both clients reconnected to the new server.
			if n := len(s.logLines(2, "msg=request", "route=/cache/:assignment/events", "status=200")); n < 2 {
				t.Errorf("the restarted server served %d event streams, want both clients' (2)", n)
			}
		})
	}
}

// freeLoopbackAddr returns a 127.0.0.1 address with a port nothing
// listens on now, for a server that must come back on the same address.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
