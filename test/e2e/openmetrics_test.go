package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// parseOpenMetrics parses stdin with prometheus_client's OpenMetrics
// parser, which refuses what the format forbids (two families of one
// name, metadata after a family's samples, ...), and prints what it read.
const parseOpenMetrics = `
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
names = [f.name for f in text_string_to_metric_families(sys.stdin.read())]
if len(set(names)) != len(names):
    sys.exit("families named twice: %s" % sorted({n for n in names if names.count(n) > 1}))
print("%d families" % len(names))
`

// TestMetricsInOpenMetricsPassAStrictParser scrapes a server's /metrics in
// OpenMetrics after some traffic and parses it with Python's
// prometheus_client (Debian's python3-prometheus-client, which test/run
// installs as root). Without it the test skips loudly, and fails under
// CI=true.
func TestMetricsInOpenMetricsPassAStrictParser(t *testing.T) {
	t.Parallel()
	python := openMetricsParser(t)
	dir := t.TempDir()
	metricsAddr := freeAddr(t)
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", "sqlite:" + dir + "/metrics.db", "--metrics-addr", metricsAddr}})
	for _, path := range []string{"/healthz", "/readyz", "/no-such-route"} {
		if res, err := http.Get(s.URL + path); err == nil {
			res.Body.Close()
		}
	}
	if res, err := http.Post(s.URL+"/auth/login", "application/json", strings.NewReader(`{"username":"nobody","password":"wrong password"}`)); err == nil {
		res.Body.Close()
	}

	req, _ := http.NewRequest(http.MethodGet, "http://"+metricsAddr+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/openmetrics-text") {
		t.Fatalf("scrape: %d %q, %v", res.StatusCode, res.Header.Get("Content-Type"), err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", parseOpenMetrics)
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("prometheus_client's OpenMetrics parser refuses the scrape (%v):\n%s", err, out)
	}
	t.Logf("prometheus_client: %s", bytes.TrimSpace(out))
}

// openMetricsParser returns a Python that has prometheus_client's
// OpenMetrics parser: Debian's /usr/bin/python3 (where
// python3-prometheus-client installs it), else python3 on the PATH.
func openMetricsParser(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if exec.Command(p, "-c", "import prometheus_client.openmetrics.parser").Run() == nil {
			return p
		}
	}
	msg := "Python's prometheus_client is needed to parse /metrics as OpenMetrics (Debian: apt-get install python3-prometheus-client; test/run does it as root)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED LOUDLY: " + msg)
	return ""
}
