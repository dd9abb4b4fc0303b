package config_test

import (
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/bootstrap/config"
)

// input is one way of starting the binary: command-line flags, an
// environment and, when yaml is not empty, a configuration file named by
// CACHEGATE_CONFIG.
type input struct {
	args []string
	env  map[string]string
	yaml string
}

// load registers the flags on a fresh flag set, parses in.args and loads.
func load(t *testing.T, in input) (config.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("cachegate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := config.RegisterGroups(fs, cli.UsesAll)
	if err := fs.Parse(in.args); err != nil {
		t.Fatalf("parse %v: %v", in.args, err)
	}
	env := maps.Clone(in.env)
	if env == nil {
		env = map[string]string{}
	}
	if in.yaml != "" {
		env["CACHEGATE_CONFIG"] = writeFile(t, "cachegate.yaml", in.yaml)
	}
	return config.Load(fs, f, func(k string) string { return env[k] })
}

// mustLoad is load that fails the test on a configuration error.
func mustLoad(t *testing.T, in input) config.Config {
	t.Helper()
	c, err := load(t, in)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return c
}

// writeFile writes text to a new file in a temporary directory.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// lines splits a joined error into its lines.
func lines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}
