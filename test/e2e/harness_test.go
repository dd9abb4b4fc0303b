package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the cachegate executable TestMain builds once.
var binary string

// Bounds of the harness's waits. They bound hangs only; no test asserts
// how fast anything is.
const (
	startBound = 20 * time.Second // from exec to GET /readyz 200
	stopBound  = 20 * time.Second // from SIGTERM or SIGKILL to exit
	cliBound   = time.Minute      // one administrative command
	logBound   = 5 * time.Second  // from a request's answer to its log line
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cachegate-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "cachegate")
	// The tag the README builds with (docs/binary-size.md).
	build := exec.Command("go", "build", "-tags", "nomsgpack,grpcnotrace", "-o", binary, "github.com/cachegate/cachegate/cmd/cachegate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building cachegate: %v\n", err)
		return 1
	}
	return m.Run()
}

// baseEnv is the test process's environment without any CACHEGATE_
// variable, so the runner's own settings (CACHEGATE_TEST_POSTGRES among
// them) never configure the binary by accident.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CACHEGATE_") {
			env = append(env, kv)
		}
	}
	return env
}

// fastHashing keeps password hashing cheap in every command and server
// the tests start.
const fastHashing = "CACHEGATE_BCRYPT_COST=4"

// publicYAML serves two public assignments, user and org, each on its own
// table, so the cache routes need no token.
const publicYAML = `cache:
  entities:
    userCache: {}
    orgCache: {}
  settings:
    assignments:
      user: {entityKey: userCache, policy: public}
      org: {entityKey: orgCache, policy: public}
`

// serverConfig says how to start one `cachegate serve`.
type serverConfig struct {
	// Dir is the working directory; empty means a new t.TempDir().
	Dir string
	// Args are serve's flags, after the harness's --addr 127.0.0.1:0.
	Args []string
	// Env are extra environment variables (NAME=value).
	Env []string
	// YAML, when set, is written to Dir/cachegate.yaml and given with
	// --config.
	YAML string
	// Bare starts `cachegate serve` with no flag and no CACHEGATE_
	// variable at all: the zero-configuration start.
	Bare bool
}

// server is one running cachegate process.
type server struct {
	// URL is the root of its HTTP service, e.g. http://127.0.0.1:41234.
	URL string
	// Dir is its working directory.
	Dir string

	cmd    *exec.Cmd
	log    *logBuffer
	exited chan struct{} // closed once the process has been waited for
}

// startServer starts a server and waits until it is ready; it fails the
// test when it cannot. Cleanup stops it with SIGTERM and asserts it exits
// with status 0.
func startServer(t *testing.T, c serverConfig) *server {
	t.Helper()
	s := launch(t, c)
	if err := s.waitReady(); err != nil {
		t.Fatalf("start cachegate: %v", err)
	}
	return s
}

// launch starts the process without waiting for it to be ready, so that
// several can start at the same time; see waitReady.
func launch(t *testing.T, c serverConfig) *server {
	t.Helper()
	if c.Dir == "" {
		c.Dir = t.TempDir()
	}
	args := []string{"serve"}
	env := baseEnv()
	if !c.Bare {
		args = append(args, "--addr", "127.0.0.1:0")
		env = append(env, fastHashing)
	}
	if c.YAML != "" {
		path := filepath.Join(c.Dir, "cachegate.yaml")
		if err := os.WriteFile(path, []byte(c.YAML), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	args = append(args, c.Args...)
	s := &server{Dir: c.Dir, log: newLogBuffer(), exited: make(chan struct{})}
	s.cmd = exec.Command(binary, args...)
	s.cmd.Dir = c.Dir
	s.cmd.Env = append(env, c.Env...)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	s.cmd.SysProcAttr = childAttr()
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("exec cachegate: %v", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if !s.hasExited() {
			if code := s.stop(t); code != 0 {
				t.Errorf("cachegate serve exited with status %d after SIGTERM, want 0", code)
			}
		}
		if t.Failed() {
			kept, dropped := s.log.failureView()
			t.Logf("cachegate serve (pid %d) log, without %d request lines of status below 500:\n%s",
				s.cmd.Process.Pid, dropped, kept)
		}
	})
	return s
}

// waitReady waits for the "listening" log line, then for GET /readyz 200.
func (s *server) waitReady() error {
	deadline := time.NewTimer(startBound)
	defer deadline.Stop()
	select {
	case addr := <-s.log.addr:
		s.URL = "http://" + addr
	case <-s.exited:
		return fmt.Errorf("exited with status %d before listening", s.cmd.ProcessState.ExitCode())
	case <-deadline.C:
		return fmt.Errorf("no listening line within %s", startBound)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(s.URL + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("exited with status %d before ready", s.cmd.ProcessState.ExitCode())
		case <-deadline.C:
			return fmt.Errorf("GET /readyz not 200 within %s", startBound)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *server) hasExited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and returns the exit status (-1 when a signal ended
// the process). A process that does not exit in time is killed and the
// test fails.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	return s.signal(t, syscall.SIGTERM)
}

// kill ends the process with SIGKILL, as a crash would.
func (s *server) kill(t *testing.T) {
	t.Helper()
	s.signal(t, syscall.SIGKILL)
}

func (s *server) signal(t *testing.T, sig os.Signal) int {
	t.Helper()
	if !s.hasExited() {
		if err := s.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("signal %v: %v", sig, err)
		}
	}
	return s.wait(t)
}

// wait waits for the process to exit and returns its status; one that
// does not exit in time is killed and the test fails.
func (s *server) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(stopBound):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("cachegate did not exit within %s", stopBound)
	}
	return s.cmd.ProcessState.ExitCode()
}

// waitLog waits until the log has a line containing every one of parts.
func (s *server) waitLog(t *testing.T, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(startBound)
	for len(s.log.lines(parts...)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q within %s", parts, startBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logLines returns the log's lines containing every one of parts once
// there are at least n, or after logBound: serve writes its info lines in
// batches, up to 100 ms late (docs/operations.md, "Logs").
func (s *server) logLines(n int, parts ...string) []string {
	deadline := time.Now().Add(logBound)
	for {
		lines := s.log.lines(parts...)
		if len(lines) >= n || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logBuffer collects a process's output and spots the address in the
// text-format line `msg=listening addr=HOST:PORT`.
type logBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	found bool
	addr  chan string
}

var listeningRE = regexp.MustCompile(`\bmsg=listening addr=(\S+)\n`)

func newLogBuffer() *logBuffer { return &logBuffer{addr: make(chan string, 1)} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.found {
		if m := listeningRE.FindSubmatch(l.buf.Bytes()); m != nil {
			l.found = true
			l.addr <- string(m[1])
		}
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// requestOK matches the log line of a request answered below 500.
var requestOK = regexp.MustCompile(`\bmsg=request\b.*\bstatus=[1-4]\d\d\b`)

// setupToken matches the one-time set-up link's token in serve's log
// (docs/admin.md, "The first admin"), which failureView never shows.
var setupToken = regexp.MustCompile(`#token=[A-Za-z0-9_-]+`)

// failureView is the log to show when a test failed: every line but the
// request lines of status below 500, which are many and rarely tell
// anything, at most the last 200 of them, with the set-up link's token
// cut out (test output holds no token).
func (l *logBuffer) failureView() (string, int) {
	var kept []string
	dropped := 0
	for _, line := range strings.Split(strings.TrimRight(l.String(), "\n"), "\n") {
		if requestOK.MatchString(line) {
			dropped++
			continue
		}
		kept = append(kept, setupToken.ReplaceAllString(line, "#token=(cut)"))
	}
	if len(kept) > 200 {
		kept = kept[len(kept)-200:]
	}
	return strings.Join(kept, "\n"), dropped
}

// lines returns the log lines that contain every one of parts.
func (l *logBuffer) lines(parts ...string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		ok := line != ""
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// cliResult is what one administrative command did.
type cliResult struct {
	Code           int
	Stdout, Stderr string
}

// runCLI runs the binary with args in dir, stdin as its standard input
// and env added to a clean environment (with cheap password hashing). The
// output is returned, never logged: it may hold what the test fed in.
func runCLI(t *testing.T, dir, stdin string, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = append(append(baseEnv(), fastHashing), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = childAttr()
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("cachegate %s: %v", args[0], err)
	}
	if ctx.Err() != nil {
		t.Fatalf("cachegate %s did not finish within %s", args[0], cliBound)
	}
	return cliResult{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
}
