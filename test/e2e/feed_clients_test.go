package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// feedBound bounds the whole program of test/rockets/feed.js: 2,000
// writes, the server's 10 s write deadline, the replay after the
// reconnection, the heartbeats of the second client.
const feedBound = 4 * time.Minute

// cutLine is the server's debug line when it cuts a stream after a write
// that failed or timed out (adapters/ginhttp/event_stream.go).
const cutLine = "connection cut"

// Issue 23: two real Server-Sent Events clients from npm read the change
// feed of the binary (test/rockets/feed.js says how each runs under
// Node). (a) The WHATWG `eventsource` stops reading while 2,000 entries
// of 8 KiB are written, until the server cuts it; it then reads on, and
// reconnects by itself (after the server's `retry:`) with
// `Last-Event-ID`: every change must arrive exactly once with its data
// intact. The program resumes reading as soon as the server logged the
// cut (this test watches the log and tells it on stdin), so any byte
// written after the failed write would reach the client.
// (b) `@microsoft/fetch-event-source` gets no empty message across
// several heartbeats, then its events. On SQLite and PostgreSQL; without
// node and npm it skips loudly, and fails under CI=true.
func TestRealSSEClientsReadTheChangeFeedExactlyOnce(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	app := rocketsProject.install(t, npm)
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			dbURL, _, _ := db.open(t, dir)
			const username, password = "feedy", "feed-password-1"
			if r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", username,
				"--password-stdin", "--database", dbURL); r.Code != 0 {
				t.Fatalf("users add: exit %d: %s", r.Code, r.Stderr)
			}
			s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", dbURL,
				"--events-heartbeat", "200ms", "--events-retry", "500ms", "--log-level", "debug"}})

			ctx, cancel := context.WithTimeout(context.Background(), feedBound)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "feed.js")
			cmd.Dir = app
			cmd.Env = append(os.Environ(), "CACHEGATE_URL="+s.URL,
				"CACHEGATE_USERNAME="+username, "CACHEGATE_PASSWORD="+password, "CACHEGATE_FEED_RETRY_MS=500")
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
			out, resumed := driveFeed(ctx, stdout, stdin, s)
			err = cmd.Wait()
			steps := out.String() + stderr.String()
			if ctx.Err() != nil {
				t.Fatalf("feed.js did not finish within %s:\n%s", feedBound, steps)
			}
			if err != nil {
				t.Fatalf("feed.js failed (%v); its steps:\n%s", err, steps)
			}
			if !resumed || !strings.Contains(steps, "feed complete") {
				t.Fatalf("feed.js ended without completing (resumed after the cut: %v):\n%s", resumed, steps)
			}
			t.Logf("feed.js's steps:\n%s", steps)

			// (a) opened twice (the cut, the reconnection), (b) once.
			if n := len(s.logLines(3, "msg=request", "route=/cache/:assignment/events", "status=200")); n < 3 {
				t.Errorf("the server served %d event streams, want at least 3", n)
			}
			for _, line := range s.log.lines("level=ERROR") {
				t.Errorf("the server logged: %s", line)
			}
		})
	}
}

// driveFeed copies feed.js's output into out; after "FEED written" it
// waits until the server logged a stream cut, then writes "resume". It
// returns when the program's output ends; resumed says whether it was
// told to resume.
func driveFeed(ctx context.Context, stdout io.Reader, stdin io.WriteCloser, s *server) (out *bytes.Buffer, resumed bool) {
	out = &bytes.Buffer{}
	var wg sync.WaitGroup
	done := make(chan struct{})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if !strings.HasPrefix(line, "FEED written") || resumed {
			continue
		}
		resumed = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(s.log.lines(cutLine)) == 0 {
				select {
				case <-ctx.Done():
					return
				case <-done:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
			_, _ = io.WriteString(stdin, "resume\n")
		}()
	}
	close(done)
	wg.Wait()
	_ = stdin.Close()
	return out, resumed
}
