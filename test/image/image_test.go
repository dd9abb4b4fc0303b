package image

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// root is the repository, seen from this package.
const root = "../.."

// maxImageBytes is the bound docs/deployment.md promises.
const maxImageBytes = 40 << 20

// containersConf is this test's podman configuration: no default ulimits
// (the machines test/run runs on refuse the ones Debian's podman sets) and
// the runc runtime. It is a test detail, not part of the operator's
// recipe.
const containersConf = `[containers]
default_ulimits = []

[engine]
runtime = "runc"
`

// TestTheImageRunsAsDocumented builds the image with deploy/build-image
// and runs it with podman as docs/deployment.md, "The image", shows: a
// named volume on /data, port 8080 published (on a free port of
// 127.0.0.1 here). It checks the image (at most 40 MB, the user 65532,
// the OCI labels, the health check), then that GET /readyz answers 200
// from the host, `podman healthcheck run` passes, the process runs as
// 65532 and not root, a user created with `podman exec -i C
// /usr/local/bin/cachegate users add … --password-stdin` survives `podman
// stop` (graceful: status 0, the log's "stopped", well within podman's
// 10 s) and `podman start` on the same volume. The container, the volume
// and the image are removed at the end.
//
// Test details, not the operator's recipe: podman runs as root here, with
// CONTAINERS_CONF pointing at a temporary containers.conf (containersConf:
// empty default_ulimits, runtime runc). Without podman, or not as root, it
// skips loudly, and fails under CI=true (test/run installs Debian's
// podman as root).
func TestTheImageRunsAsDocumented(t *testing.T) {
	t.Parallel()
	p := newPodman(t)
	start := time.Now()
	suffix := randomSuffix(t)
	tag := "localhost/cachegate-test-" + suffix + ":t"
	ctr, vol := "cachegate-test-"+suffix, "cachegate-test-data-"+suffix

	// Build, as an operator does.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, filepath.Join(root, "deploy", "build-image"), tag)
	build.Env = append(os.Environ(), "PODMAN="+p.bin, "CONTAINERS_CONF="+p.conf)
	var buildOut, buildErr bytes.Buffer
	build.Stdout, build.Stderr = &buildOut, &buildErr
	t.Cleanup(func() { p.quiet("rmi", "-f", tag) })
	if err := build.Run(); err != nil {
		t.Fatalf("deploy/build-image %s: %v\n%s", tag, err, tail(buildErr.String(), 40))
	}
	if got := lastLine(buildOut.String()); got != tag {
		t.Errorf("deploy/build-image printed %q last, want the tag %q", got, tag)
	}
	t.Logf("built %s in %s", tag, time.Since(start).Round(time.Second))

	var imgs []struct {
		Size   int64
		Labels map[string]string
		Config struct {
			User       string
			Env        []string
			Entrypoint []string
			Cmd        []string
			StopSignal string
		}
		Healthcheck *struct{ Test []string }
	}
	if err := json.Unmarshal([]byte(p.must("image", "inspect", tag)), &imgs); err != nil || len(imgs) != 1 {
		t.Fatalf("podman image inspect: %v (%d images)", err, len(imgs))
	}
	img := imgs[0]
	t.Logf("image size: %d bytes (%.1f MB)", img.Size, float64(img.Size)/1e6)
	if img.Size <= 0 || img.Size > maxImageBytes {
		t.Errorf("the image is %d bytes, want at most %d", img.Size, maxImageBytes)
	}
	if img.Config.User != "65532:65532" {
		t.Errorf("the image runs as %q, want 65532:65532", img.Config.User)
	}
	if img.Healthcheck == nil || !strings.Contains(strings.Join(img.Healthcheck.Test, " "), "/usr/local/bin/cachegate health") {
		t.Errorf("the image's health check is %+v, want cachegate health run without a shell", img.Healthcheck)
	} else if img.Healthcheck.Test[0] != "CMD" {
		t.Errorf("the health check is %q, want the exec form (CMD), which needs no shell", img.Healthcheck.Test)
	}
	if img.Config.StopSignal != "SIGTERM" && img.Config.StopSignal != "15" {
		t.Errorf("the stop signal is %q, want SIGTERM", img.Config.StopSignal)
	}
	for _, want := range []string{"CACHEGATE_ADDR=0.0.0.0:8080", "CACHEGATE_DATABASE=sqlite:/data/cachegate.db"} {
		if !strings.Contains(strings.Join(img.Config.Env, "\n"), want) {
			t.Errorf("the image's environment %q lacks %s", img.Config.Env, want)
		}
	}
	rev := gitHead(t)
	for _, l := range []string{"version", "revision", "source"} {
		if img.Labels["org.opencontainers.image."+l] == "" {
			t.Errorf("the label org.opencontainers.image.%s is missing (labels: %v)", l, img.Labels)
		}
	}
	if rev != "" && !strings.HasPrefix(img.Labels["org.opencontainers.image.revision"], rev) {
		t.Errorf("revision label %q, want the checkout's %s", img.Labels["org.opencontainers.image.revision"], rev)
	}

	// Run, as the docs show.
	t.Cleanup(func() { p.quiet("volume", "rm", "-f", vol) })
	t.Cleanup(func() { p.quiet("rm", "-f", "-t", "0", ctr) })
	p.must("volume", "create", vol)
	p.must("run", "-d", "--name", ctr, "-p", "127.0.0.1::8080", "-v", vol+":/data", tag)
	base := "http://" + strings.TrimSpace(strings.Split(p.must("port", ctr, "8080/tcp"), "\n")[0])
	p.waitReady(t, ctr, base)

	if out, err := p.run("healthcheck", "run", ctr); err != nil {
		t.Errorf("podman healthcheck run: %v %s", err, out)
	}
	// The process, seen from the host (no user namespace: its uid is the
	// host's), is 65532 and not root.
	pid := strings.TrimSpace(p.must("inspect", "--format", "{{.State.Pid}}", ctr))
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatalf("the container's process %s: %v", pid, err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
			for _, id := range f[1:] {
				if id != "65532" {
					t.Errorf("the container's process has %s, want 65532 throughout (never root)", l)
					break
				}
			}
		}
	}
	if top := p.must("top", ctr, "huser"); !strings.Contains(top, "65532") || strings.Contains(top, "root") {
		t.Errorf("podman top %s huser:\n%s\nwant 65532", ctr, top)
	}

	const password = "an image password of 30 bytes"
	add := exec.Command(p.bin, "exec", "-i", ctr, "/usr/local/bin/cachegate", "users", "add", "--username", "imageuser", "--password-stdin")
	add.Env = p.env()
	add.Stdin = strings.NewReader(password + "\n")
	out, err := add.CombinedOutput()
	id := strings.TrimSpace(string(out))
	if err != nil || len(id) != 36 {
		t.Fatalf("users add in the container: %v: %s", err, out)
	}

	// A graceful stop: serve drains and exits 0 before podman would kill.
	stopStart := time.Now()
	p.must("stop", ctr)
	stopTook := time.Since(stopStart)
	if code := strings.TrimSpace(p.must("inspect", "--format", "{{.State.ExitCode}}", ctr)); code != "0" {
		t.Errorf("after podman stop the exit status is %s, want 0 (a graceful stop)", code)
	}
	if stopTook > 9*time.Second {
		t.Errorf("podman stop took %s: SIGTERM did not stop serve before podman's 10 s", stopTook)
	}
	if logs, _ := p.run("logs", ctr); !strings.Contains(logs, "msg=stopped") {
		t.Errorf("the log does not end with msg=stopped:\n%s", tail(logs, 10))
	} else if strings.Contains(logs, password) {
		t.Errorf("the password appears in the container's log")
	}
	t.Logf("podman stop took %s", stopTook.Round(time.Millisecond))

	// The same container, the same volume: the user is still there.
	p.must("start", ctr)
	base = "http://" + strings.TrimSpace(strings.Split(p.must("port", ctr, "8080/tcp"), "\n")[0])
	p.waitReady(t, ctr, base)
	if list := p.must("exec", ctr, "/usr/local/bin/cachegate", "users", "list"); !strings.Contains(list, id) || !strings.Contains(list, "imageuser") {
		t.Errorf("after a restart users list shows:\n%s\nwant imageuser (%s)", list, id)
	}
	// And it answers a login over the published port.
	body := fmt.Sprintf(`{"username":"imageuser","password":%q}`, password)
	resp, err := http.Post(base+"/auth/login", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("login after the restart: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("login after the restart: %d, want 201", resp.StatusCode)
	}
	t.Logf("the whole image test took %s", time.Since(start).Round(time.Second))
}

// podman runs Debian's podman with this test's configuration.
type podman struct {
	t    *testing.T
	bin  string
	conf string
}

func newPodman(t *testing.T) *podman {
	t.Helper()
	bin, err := exec.LookPath("podman")
	if err != nil {
		skipLoudly(t, "podman is needed to build and run the image (Debian: apt-get install podman runc; test/run does it as root)")
	}
	if os.Geteuid() != 0 {
		skipLoudly(t, "the image test runs podman as root (the machines test/run runs on have no rootless set-up)")
	}
	conf := filepath.Join(t.TempDir(), "containers.conf")
	if err := os.WriteFile(conf, []byte(containersConf), 0o644); err != nil {
		t.Fatal(err)
	}
	return &podman{t: t, bin: bin, conf: conf}
}

func (p *podman) env() []string { return append(os.Environ(), "CONTAINERS_CONF="+p.conf) }

// run runs podman with args and returns its standard output and error
// together.
func (p *podman) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Env = p.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// must runs podman with args and returns its standard output; a failure
// ends the test.
func (p *podman) must(args ...string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Env = p.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		p.t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// quiet runs podman for clean-up, reporting only a failure.
func (p *podman) quiet(args ...string) {
	if out, err := p.run(args...); err != nil {
		p.t.Logf("clean-up: podman %s: %v %s", strings.Join(args, " "), err, out)
	}
}

// waitReady waits up to 30 s for GET /readyz at base to answer 200 from
// the host.
func (p *podman) waitReady(t *testing.T, ctr, base string) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	last := "no answer"
	for time.Now().Before(deadline) {
		resp, err := client.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = strconv.Itoa(resp.StatusCode)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	logs, _ := p.run("logs", ctr)
	t.Fatalf("GET %s/readyz from the host: %s after 30 s; the container's log:\n%s", base, last, tail(logs, 20))
}

// skipLoudly skips, or fails under CI=true, where nothing may be skipped.
func skipLoudly(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED LOUDLY: " + msg)
}

func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// gitHead is the checkout's revision, or "" outside a git checkout.
func gitHead(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
