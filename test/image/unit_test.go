package image

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// unitPath is the systemd unit docs/deployment.md installs.
const unitPath = "deploy/cachegate.service"

// installedBinary is where the unit runs cachegate from.
const installedBinary = "/usr/local/bin/cachegate"

// TestTheSystemdUnitIsAcceptedAndHardened runs `systemd-analyze verify` on
// deploy/cachegate.service, its ExecStart pointed at a binary built from
// this checkout (verify refuses a command that is not there), and wants
// status 0 and not one warning (an unknown or misspelt directive is only
// a warning). It checks the hardening docs/deployment.md promises is
// there, and that the settings the unit gives in Environment= are ones
// `cachegate serve` accepts (a dry run: an invalid log level added, so
// that serve stops, status 2, once its configuration is checked).
// Without systemd-analyze it skips loudly, and fails under CI=true
// (test/run installs Debian's systemd as root).
func TestTheSystemdUnitIsAcceptedAndHardened(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root, unitPath))
	if err != nil {
		t.Fatal(err)
	}
	unit := string(raw)
	directives := map[string][]string{}
	for _, l := range strings.Split(unit, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && !strings.HasPrefix(k, "#") {
			directives[k] = append(directives[k], v)
		}
	}
	for k, want := range map[string]string{
		"DynamicUser": "yes", "StateDirectory": "cachegate", "ProtectSystem": "strict", "ProtectHome": "yes",
		"NoNewPrivileges": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectKernelTunables": "yes",
		"ProtectKernelModules": "yes", "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "SystemCallFilter": "@system-service",
		"CapabilityBoundingSet": "", "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes",
		"RestrictNamespaces": "yes", "RestrictSUIDSGID": "yes", "ProtectClock": "yes",
		"EnvironmentFile": "-/etc/cachegate/cachegate.env", "ExecStart": installedBinary + " serve",
	} {
		if !contains(directives[k], want) {
			t.Errorf("%s: %s=%s is missing (has %q)", unitPath, k, want, directives[k])
		}
	}
	if db := envOf(directives)["CACHEGATE_DATABASE"]; db != "sqlite:%S/cachegate/cachegate.db" {
		t.Errorf("%s: the database is %q, want SQLite in the state directory (%%S/cachegate)", unitPath, db)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		skipLoudly(t, "systemd-analyze is needed to verify "+unitPath+" (Debian: apt-get install systemd; test/run does it as root)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cachegate")
	// The build's flags are deploy/build-image's, so the two tests of this
	// package share compiled packages; the bound leaves a loaded machine
	// time for a cold build.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-tags", "nomsgpack,grpcnotrace", "-trimpath", "-o", bin, "./cmd/cachegate")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	copyPath := filepath.Join(dir, "cachegate.service")
	if err := os.WriteFile(copyPath, []byte(strings.ReplaceAll(unit, installedBinary, bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	verify := exec.CommandContext(ctx, analyze, "verify", copyPath)
	var out bytes.Buffer
	verify.Stdout, verify.Stderr = &out, &out
	err = verify.Run()
	if err != nil || strings.TrimSpace(out.String()) != "" {
		t.Errorf("systemd-analyze verify %s: %v, want status 0 and no warning:\n%s", unitPath, err, out.String())
	}

	// The unit's Environment=, with %S (/var/lib) in a temporary
	// directory, is a configuration serve accepts.
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(state, "cachegate"), 0o700); err != nil {
		t.Fatal(err)
	}
	serve := exec.CommandContext(ctx, bin, "serve")
	serve.Dir = filepath.Join(state, "cachegate")
	serve.Env = []string{"PATH=" + os.Getenv("PATH"), "CACHEGATE_LOG_LEVEL=not-a-level"}
	for k, v := range envOf(directives) {
		serve.Env = append(serve.Env, k+"="+strings.ReplaceAll(v, "%S", state))
	}
	var stderr bytes.Buffer
	serve.Stderr = &stderr
	_ = serve.Run()
	problems := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if code := serve.ProcessState.ExitCode(); code != 2 || len(problems) != 1 || !strings.Contains(problems[0], "not-a-level") {
		t.Errorf("serve with the unit's environment (dry run): status %d, stderr:\n%s\nwant 2 and only the dry run's log level refused", code, stderr.String())
	}
}

// envOf is the unit's Environment= settings.
func envOf(directives map[string][]string) map[string]string {
	env := map[string]string{}
	assign := regexp.MustCompile(`^"?([A-Z_]+)=([^"]*)"?$`)
	for _, e := range directives["Environment"] {
		if m := assign.FindStringSubmatch(e); m != nil {
			env[m[1]] = m[2]
		}
	}
	return env
}

func contains(values []string, want string) bool {
	for _, v := range values {
		if strings.TrimSpace(v) == want {
			return true
		}
	}
	return false
}
