package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var openapiProject = &npmProject{name: "openapi", files: []string{"package.json", "package-lock.json", "redocly.yaml"}}

// TestTheOpenAPIDocumentPassesRedoclyLint lints the document the binary
// serves at GET /openapi.json with @redocly/cli's recommended ruleset
// (test/openapi): no error is allowed; warnings are logged. Without node
// and npm it skips loudly, and fails under CI=true.
func TestTheOpenAPIDocumentPassesRedoclyLint(t *testing.T) {
	t.Parallel()
	node, npm := nodeTools(t)
	app := openapiProject.install(t, npm)
	dir := t.TempDir()
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", "sqlite:" + dir + "/openapi.db"}})
	res, err := http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d, %v", res.StatusCode, err)
	}
	file := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), npmBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(app, "node_modules", "@redocly", "cli", "bin", "cli.js"),
		"lint", "--format=json", file)
	cmd.Dir = app // its redocly.yaml: the recommended ruleset
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // exits 1 when there are errors; the report says which
	var report struct {
		Totals   struct{ Errors, Warnings int }
		Version  string
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string
			Message  string
			Location []struct{ Pointer string }
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil || report.Version == "" {
		t.Fatalf("redocly lint (%v) gave no report (%v):\n%s\n%s", runErr, err, stdout.String(), stderr.String())
	}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		if p.Severity == "error" {
			t.Errorf("%s: %s (%s)", where, p.Message, p.RuleID)
		} else {
			t.Logf("%s %s: %s (%s)", p.Severity, where, p.Message, p.RuleID)
		}
	}
	if report.Totals.Errors != 0 || runErr != nil {
		t.Fatalf("redocly lint %s: %d errors, %d warnings (exit: %v)", report.Version, report.Totals.Errors, report.Totals.Warnings, runErr)
	}
	t.Logf("redocly lint %s: no errors, %d warnings", report.Version, report.Totals.Warnings)
}
