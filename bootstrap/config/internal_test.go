package config

import (
	"flag"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/domain"
)

func TestSettingsNameEverySettingThreeWays(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range settings(new(Config)) {
		if s.flag == "" || s.key == "" || s.usage == "" {
			t.Errorf("%+v lacks a name or usage", s)
		}
		if s.env() != "CACHEGATE_"+strings.ToUpper(strings.ReplaceAll(s.flag, "-", "_")) {
			t.Errorf("%s: env %s does not follow the flag name", s.flag, s.env())
		}
		if seen[s.key] {
			t.Errorf("YAML key %s listed twice", s.key)
		}
		seen[s.key] = true
	}
}

// TestSettingDefaultsParse pins what Default relies on: every default of
// the table parses and passes its check; and the defaults the domain also
// states agree with it.
func TestSettingDefaultsParse(t *testing.T) {
	t.Parallel()
	var c Config
	for _, s := range settings(&c) {
		if s.def == "" {
			continue
		}
		if err := s.parse(s.def); err != nil {
			t.Fatalf("%s: default %q does not parse: %v", s.flag, s.def, err)
		}
		if s.check != nil {
			if err := s.check(); err != nil {
				t.Fatalf("%s: default %q fails its check: %v", s.flag, s.def, err)
			}
		}
	}
	if c.AuditFoldWindow != domain.DefaultAuditFold.Window {
		t.Errorf("auditFoldWindow defaults to %s, domain.DefaultAuditFold to %s", c.AuditFoldWindow, domain.DefaultAuditFold.Window)
	}
}

func FuzzParseFile(f *testing.F) {
	for _, seed := range []string{
		"", "addr: :1\n", "cache:\n  entities: {a: {table: t}}\n  settings: {assignments: {x: {entityKey: a}}}\n",
		"a: &x {b: *x}\n", "auth: *y\n", "- 1\n", "{", "cache: {entities: [1]}\n", "? [a]\n: b\n",
		"<<: {addr: x}\n", "auth:\n  throttle:\n    window: 1h\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fv, errs := parseFile(data)
		var c Config = Default()
		errs = append(errs, applyCache(&c, fv)...)
		for _, err := range errs {
			if err == nil {
				t.Fatal("nil error collected")
			}
		}
	})
}

// TestEverySettingHasAGroup: a new setting must say which commands read
// it; left out, it would appear in every command's --help.
func TestEverySettingHasAGroup(t *testing.T) {
	t.Parallel()
	for _, s := range settings(new(Config)) {
		if s.group == 0 {
			t.Errorf("setting --%s is in no group (settings.go)", s.flag)
		}
	}
}

func TestRegisterGroupsDefinesOnlyTheGroupsFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		groups cli.Uses
		want   []string
		absent []string
	}{
		{"users add's groups", cli.UsesStorage | cli.UsesPasswords,
			[]string{"config", "database", "database-timeout", "log-level", "bcrypt-cost", "password-algorithm"},
			[]string{"addr", "cors-origins", "metrics-addr", "key-encryption-secret-file", "hs256-secret-file", "issuer"}},
		{"the key commands' groups", cli.UsesStorage | cli.UsesKeys,
			[]string{"database", "key-encryption-secret-file", "hs256-secret-file", "issuer"},
			[]string{"addr", "bcrypt-cost", "throttle-window"}},
		{"import's groups", cli.UsesStorage | cli.UsesData,
			[]string{"database", "data-bytes"},
			[]string{"addr", "body-bytes", "bcrypt-cost", "issuer"}},
		{"every group", cli.UsesAll,
			[]string{"addr", "cors-origins", "database", "bcrypt-cost", "key-encryption-secret-file", "max-conns-per-address"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			RegisterGroups(fs, c.groups)
			for _, n := range c.want {
				if fs.Lookup(n) == nil {
					t.Errorf("--%s is not defined", n)
				}
			}
			for _, n := range c.absent {
				if fs.Lookup(n) != nil {
					t.Errorf("--%s is defined", n)
				}
			}
		})
	}
}
