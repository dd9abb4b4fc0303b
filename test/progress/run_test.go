package main

import (
	"os/exec"
	"strings"
	"testing"
)

// sourceRun runs script in bash after sourcing test/run (which then only
// defines its functions), with env added to a minimal environment.
func sourceRun(t *testing.T, script string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "set -euo pipefail; source ../run; "+script)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func TestRunRecordsASkippedPartAndRefusesItUnderCI(t *testing.T) {
	t.Parallel()
	script := `skip_part "PostgreSQL (not root)"; skip_part "chromium (not root)"; join "${SKIPPED[@]}"`
	out, errOut, err := sourceRun(t, script)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if out != "PostgreSQL (not root); chromium (not root)\n" {
		t.Errorf("recorded parts %q", out)
	}
	if !strings.Contains(errOut, "test/run: SKIPPING PostgreSQL (not root)\n") {
		t.Errorf("the skip is not logged when it happens: %q", errOut)
	}
	out, errOut, err = sourceRun(t, script, "CI=true")
	if err == nil || out != "" || !strings.Contains(errOut, "CI=true: nothing may be skipped, but this would be: PostgreSQL (not root)") {
		t.Errorf("under CI: err %v, stdout %q, stderr %q", err, out, errOut)
	}
}

func TestRunInstrumentsAllButSQLitesCAndDropsRaceOnlyWhenToldTo(t *testing.T) {
	t.Parallel()
	out, errOut, err := sourceRun(t, `go_test_args -run X; echo --; RACE_FLAGS=(); go_test_args ./domain/`)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	with, without, _ := strings.Cut(out, "--\n")
	if !strings.Contains(with, "-race\n-gcflags=modernc.org/libc/...=-race=false\n-gcflags=modernc.org/sqlite/lib=-race=false\n") ||
		!strings.HasSuffix(with, "-run\nX\n./test/e2e\n./adapters/bunstore\n./...\n") {
		t.Errorf("default arguments %q", with)
	}
	if strings.Contains(without, "-race") || strings.Contains(without, "gcflags") || !strings.HasSuffix(without, "20m\n./domain/\n") {
		t.Errorf("arguments without a C compiler %q", without)
	}
}
