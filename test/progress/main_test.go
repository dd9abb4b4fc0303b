package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock is a settable now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func ev(action, pkg, test, output string) string {
	b, _ := json.Marshal(event{Action: action, Package: pkg, Test: test, Output: output, Elapsed: 1.5})
	return string(b)
}

// feed runs lines through a report.
func feed(r *report, lines ...string) {
	for _, l := range lines {
		r.line(l)
	}
}

func TestPassingPackagesPrintOneLineAndFailedTestsAllTheirOutput(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	r := newReport(&out, c.now, nil)
	feed(r,
		ev("start", "m/a", "", ""),
		ev("start", "m/b", "", ""),
		ev("run", "m/a", "TestGood", ""),
		ev("output", "m/a", "TestGood", "=== RUN   TestGood\n"),
		ev("output", "m/a", "TestGood", "    a_test.go:9: chatter of a passing test\n"),
		ev("pass", "m/a", "TestGood", ""),
		ev("output", "m/a", "", "PASS\n"),
		ev("pass", "m/a", "", ""),
		ev("output", "m/b", "TestBad", "=== RUN   TestBad\n"),
		ev("output", "m/b", "TestBad", "    b_test.go:7: want 1, got 2\n"),
		ev("output", "m/b", "TestBad", "--- FAIL: TestBad (0.00s)\n"),
		ev("fail", "m/b", "TestBad", ""),
		ev("output", "m/b", "", "FAIL\n"),
		ev("output", "m/b", "", "FAIL\tm/b\t1.5s\n"),
		ev("fail", "m/b", "", ""),
		"go: a line that is not JSON",
	)
	if status := r.finish(false); status != 0 {
		t.Errorf("status %d without skips, want 0", status)
	}
	got := out.String()
	for _, want := range []string{"ok  \tm/a\t1.5s\n", "b_test.go:7: want 1, got 2\n", "--- FAIL: TestBad", "FAIL\tm/b\t1.5s\n",
		"go: a line that is not JSON\n", "1 packages ok, 1 FAIL (m/b)"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") || strings.Contains(got, marker) {
		t.Errorf("output shows a passing test's log or a skip line:\n%s", got)
	}
}

func TestAPanickedPackageShowsTheOutputOfItsUnfinishedTests(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	r := newReport(&out, c.now, nil)
	feed(r,
		ev("start", "m/p", "", ""),
		ev("output", "m/p", "TestBoom", "=== RUN   TestBoom\n"),
		ev("output", "m/p", "TestBoom", "panic: boom\n"),
		ev("output", "m/p", "", "FAIL\tm/p\t0.1s\n"),
		ev("fail", "m/p", "", ""),
	)
	if got := out.String(); !strings.Contains(got, "panic: boom\n") || !strings.Contains(got, "FAIL\tm/p") {
		t.Errorf("the panic or the FAIL line is missing:\n%s", got)
	}
}

func TestQuietOutputGetsAProgressLineNamingRunningPackages(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	r := newReport(&out, c.now, nil)
	feed(r, ev("start", "m/slow", "", ""))
	c.t = c.t.Add(10 * time.Second)
	feed(r, ev("start", "m/fast", "", ""), ev("pass", "m/fast", "", ""))
	before := out.Len()
	c.t = c.t.Add(quietFor - time.Second)
	r.tick()
	if out.Len() != before {
		t.Fatalf("a progress line before %s of quiet: %q", quietFor, out.String()[before:])
	}
	c.t = c.t.Add(time.Second)
	r.tick()
	got := out.String()[before:]
	if !strings.Contains(got, "1 ok, 0 FAIL; running m/slow (40s)") {
		t.Errorf("progress line %q does not name the running package and its time", got)
	}
	// It comes again after the next quiet period, not at every tick.
	before = out.Len()
	c.t = c.t.Add(time.Second)
	r.tick()
	c.t = c.t.Add(quietFor)
	r.tick()
	if n := strings.Count(out.String()[before:], "\n"); n != 1 {
		t.Errorf("%d progress lines in %s, want 1", n, quietFor+time.Second)
	}
	r.finish(false)
	if !strings.Contains(out.String(), "no result (interrupted?) from m/slow") {
		t.Errorf("an unfinished package is not named at the end:\n%s", out.String())
	}
}

func TestSkippedPartsAndTestsAreNamedInOneLineAndFailUnderCI(t *testing.T) {
	t.Parallel()
	run := func(ci bool) (string, int) {
		var out bytes.Buffer
		c := &clock{t: time.Unix(0, 0)}
		r := newReport(&out, c.now, []string{"chromium (not root)"})
		feed(r,
			ev("start", "m/s", "", ""),
			ev("output", "m/s", "TestPG", "    pgtest.go:38: SKIPPED, NO POSTGRESQL: set X\n"),
			ev("output", "m/s", "TestPG", "--- SKIP: TestPG (0.00s)\n"),
			ev("skip", "m/s", "TestPG", ""),
			ev("output", "m/s", "TestPG2", "    pgtest.go:38: SKIPPED, NO POSTGRESQL: set X\n"),
			ev("skip", "m/s", "TestPG2", ""),
			ev("output", "m/s", "FuzzX/seed#1", "    x_test.go:3: not JSON\n"),
			ev("skip", "m/s", "FuzzX/seed#1", ""),
			ev("pass", "m/s", "", ""),
		)
		status := r.finish(ci)
		return out.String(), status
	}
	got, status := run(false)
	if status != 0 {
		t.Errorf("status %d outside CI, want 0", status)
	}
	var lines []string
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, marker) {
			lines = append(lines, l)
		}
	}
	want := `test/run: SKIPPED: chromium (not root); 2 tests (m/s.TestPG, m/s.TestPG2) "SKIPPED, NO POSTGRESQL: set X"`
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("skip lines %q, want exactly [%q]", lines, want)
	}
	if strings.Contains(got, "FuzzX") {
		t.Errorf("a quiet skip (a fuzz seed) is named:\n%s", got)
	}
	got, status = run(true)
	if status != 1 || !strings.Contains(got, "under CI=true nothing may be skipped") {
		t.Errorf("under CI: status %d, output\n%s", status, got)
	}
}

// The command itself: go test's JSON in, the summary out, the exit status.
func TestCommandReadsStdinAndExitsByCI(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "progress")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	input := strings.Join([]string{
		ev("start", "m/s", "", ""),
		ev("output", "m/s", "TestPG", "    SKIPPED, NO POSTGRESQL\n"),
		ev("skip", "m/s", "TestPG", ""),
		ev("pass", "m/s", "", ""),
	}, "\n") + "\n"
	for _, ci := range []bool{false, true} {
		cmd := exec.Command(bin, "-skipped", "PostgreSQL (not root, no server binaries)")
		if ci {
			cmd.Args = append(cmd.Args, "-ci")
		}
		cmd.Stdin = strings.NewReader(input)
		cmd.Env = append(os.Environ(), "CI=")
		out, err := cmd.Output()
		if ci != (err != nil) {
			t.Errorf("ci=%v: exit error %v", ci, err)
		}
		if !strings.Contains(string(out), "test/run: SKIPPED: PostgreSQL (not root, no server binaries); 1 tests (m/s.TestPG)") {
			t.Errorf("ci=%v: no skip line in\n%s", ci, out)
		}
	}
}
