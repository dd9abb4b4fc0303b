package config_test

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/bootstrap/config"
)

func TestSnakeCase(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"userCache":  "user_cache",
		"orgCache":   "org_cache",
		"HTTPCache":  "http_cache",
		"cache2Go":   "cache2_go",
		"org-cache":  "org_cache",
		"user_Cache": "user_cache",
		"plain":      "plain",
	}
	for in, want := range cases {
		if got := config.SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDatabaseURLsOfEveryDialectAreAccepted(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"sqlite:cachegate.db", "sqlite::memory:", "sqlite:/var/lib/cachegate.db",
		"postgres://u@h/db", "postgresql://u@h/db"} {
		if c := mustLoad(t, input{args: []string{"--database", url}}); c.Database != url {
			t.Errorf("--database %s loaded as %q", url, c.Database)
		}
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	t.Run("a bare boolean flag sets it and =false clears it", func(t *testing.T) {
		t.Parallel()
		c := mustLoad(t, input{args: []string{"--enable-guards=false"}})
		if c.Auth.EnableGuards {
			t.Fatal("--enable-guards=false left guards on")
		}
		c = mustLoad(t, input{args: []string{"--enable-guards"}, env: map[string]string{"CACHEGATE_ENABLE_GUARDS": "false"}})
		if !c.Auth.EnableGuards {
			t.Fatal("--enable-guards did not beat the environment")
		}
	})
	t.Run("the secret itself has no flag", func(t *testing.T) {
		t.Parallel()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		config.RegisterGroups(fs, cli.UsesAll)
		if fs.Lookup("hs256-secret") != nil {
			t.Fatal("--hs256-secret exists")
		}
		for _, name := range []string{"addr", "database", "config", "access-token-ttl", "refresh-token-ttl",
			"metrics-addr", "log-format", "log-level", "enable-guards", "bcrypt-cost", "hs256-secret-file", "body-bytes"} {
			if fs.Lookup(name) == nil {
				t.Errorf("--%s is missing", name)
			}
		}
	})
	t.Run("help names each flag's environment variable and YAML key and default", func(t *testing.T) {
		t.Parallel()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		var out bytes.Buffer
		fs.SetOutput(&out)
		config.RegisterGroups(fs, cli.UsesAll)
		fs.PrintDefaults()
		for _, want := range []string{"CACHEGATE_ACCESS_TOKEN_TTL", "accessTokenTTL", "-access-token-ttl duration", "(default 15m)", "auth.throttle.window"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("help lacks %q:\n%s", want, out.String())
			}
		}
	})
	t.Run("flags of another flag set are ignored", func(t *testing.T) {
		t.Parallel()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		f := config.RegisterGroups(fs, cli.UsesAll)
		other := flag.NewFlagSet("y", flag.ContinueOnError)
		config.RegisterGroups(other, cli.UsesAll)
		if err := other.Parse([]string{"--addr", ":1"}); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(other, f, nil)
		if err != nil || c.Addr != "127.0.0.1:8080" {
			t.Fatalf("addr %q, err %v; want the default", c.Addr, err)
		}
	})
}

func TestValidateChecksACodeBuiltConfig(t *testing.T) {
	t.Parallel()
	c := config.Default()
	c.Auth.BcryptCost = 40
	c.Auth.HS256Secret = config.NewSecret("too short")
	c.Cache.Settings.Assignments = map[string]config.Assignment{"user": {EntityKey: "userCache"}}
	got := lines(c.Validate())
	want := []string{
		"auth.hs256Secret: must be at least 32 bytes",
		"auth.bcryptCost: 40 must be between 4 and 31",
		"cache.settings.assignments.user.policy: must be owner, authenticated or public",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Validate:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
