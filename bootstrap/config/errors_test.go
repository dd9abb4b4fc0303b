package config_test

import (
	"slices"
	"strings"
	"testing"
)

func TestConfigurationErrors(t *testing.T) {
	t.Parallel()
	const short = "short-SECRET-value"
	shortKeySecret := writeFile(t, "short-kek", "   "+short+strings.Repeat(" ", 40)+"\n")
	blankKeySecret := writeFile(t, "blank-kek", " \n\t\n")
	cases := []struct {
		name string
		in   input
		want []string // the exact lines of the error, in order
	}{
		{"an assignment naming an unknown entity",
			input{yaml: "cache:\n  entities: {userCache: {}}\n  settings:\n    assignments:\n      user: {entityKey: userCache}\n      org: {entityKey: nope}\n"},
			[]string{`cache.settings.assignments.org.entityKey: "nope" is not a key of cache.entities`}},
		{"an assignment without an entity key",
			input{yaml: "cache:\n  settings:\n    assignments:\n      org: {policy: public}\n"},
			[]string{`cache.settings.assignments.org.entityKey: must name a key of cache.entities`}},
		{"a bare number as a duration flag",
			input{args: []string{"--access-token-ttl", "10"}},
			[]string{`access-token-ttl: "10" must be a duration such as 15m or 30d`}},
		{"a bad duration in the environment",
			input{env: map[string]string{"CACHEGATE_ACCESS_TOKEN_TTL": "forever"}},
			[]string{`CACHEGATE_ACCESS_TOKEN_TTL: "forever" must be a duration such as 15m or 30d`}},
		{"a bad duration in YAML",
			input{yaml: "auth:\n  throttle:\n    window: 10\n"},
			[]string{`auth.throttle.window: "10" must be a duration such as 15m or 30d (config line 3)`}},
		{"a short HS256 secret in YAML",
			input{yaml: "auth:\n  hs256Secret: " + short + "\n"},
			[]string{`auth.hs256Secret: must be at least 32 bytes (config line 2)`}},
		{"a short HS256 secret in the environment",
			input{env: map[string]string{"CACHEGATE_HS256_SECRET": short}},
			[]string{`CACHEGATE_HS256_SECRET: must be at least 32 bytes`}},
		{"a secret and a secret file in the same layer",
			input{env: map[string]string{"CACHEGATE_HS256_SECRET": strings.Repeat("s", 32), "CACHEGATE_HS256_SECRET_FILE": "/x"}},
			[]string{`CACHEGATE_HS256_SECRET: set only one of CACHEGATE_HS256_SECRET and CACHEGATE_HS256_SECRET_FILE`}},
		{"an unreadable secret file",
			input{args: []string{"--hs256-secret-file", "/nonexistent/hs256"}},
			[]string{`hs256-secret-file: open /nonexistent/hs256: no such file or directory`}},
		{"a short key encryption secret, whatever whitespace pads it",
			input{args: []string{"--key-encryption-secret-file", shortKeySecret}},
			[]string{`key-encryption-secret-file: the secret must be at least 32 bytes`}},
		{"an empty key encryption secret file",
			input{env: map[string]string{"CACHEGATE_KEY_ENCRYPTION_SECRET_FILE": blankKeySecret}},
			[]string{`CACHEGATE_KEY_ENCRYPTION_SECRET_FILE: ` + blankKeySecret + `: is empty`}},
		{"a session maximum of zero",
			input{yaml: "auth:\n  sessionMax: 0s\n"},
			[]string{`auth.sessionMax: "0s" must be a duration such as 15m or 30d (config line 2)`}},
		{"a reconnection delay beyond an hour",
			input{args: []string{"--events-retry", "2h"}},
			[]string{`events-retry: 2h0m0s must be between 1ms and 1h`}},
		{"a missing configuration file",
			input{args: []string{"--config", "/nonexistent/x.yaml"}},
			[]string{`config: open /nonexistent/x.yaml: no such file or directory`}},
		{"a negative quota flag",
			input{args: []string{"--quota-max-entries", "-1"}},
			[]string{`quota-max-entries: -1 must be between 0 and 1099511627776`}},
		{"a quota size without a number",
			input{env: map[string]string{"CACHEGATE_QUOTA_MAX_BYTES": "lots"}},
			[]string{`CACHEGATE_QUOTA_MAX_BYTES: "lots" must be a size in bytes such as 1048576, 256KiB or 1MiB`}},
		{"bad quotas of an assignment",
			input{yaml: "cache:\n  settings:\n    assignments:\n      user: {entityKey: userCache, maxEntries: many, maxBytes: -5}\n"},
			[]string{
				`cache.settings.assignments.user.maxEntries: "many" must be a whole number (config line 4)`,
				`cache.settings.assignments.user.maxBytes: "-5" must be a size in bytes such as 1048576, 256KiB or 1MiB (config line 4)`,
			}},
		{"an assignment quota out of range, reported once",
			input{yaml: "cache:\n  settings:\n    assignments:\n      user: {entityKey: userCache, maxEntries: -1}\n"},
			[]string{`cache.settings.assignments.user.maxEntries: -1 must be between 0 and 1099511627776 (config line 4)`}},
		{"a trusted proxy that is not an address",
			input{args: []string{"--trusted-proxies", "10.0.0.0/8, balancer"}},
			[]string{`trusted-proxies: "balancer": must be IP addresses or CIDRs such as 10.0.0.0/8`}},
		{"a trusted proxy list holding a mapping",
			input{yaml: "trustedProxies:\n  - 10.0.0.0/8\n  - {a: b}\n"},
			[]string{`trustedProxies: must be a list of single values (config line 3)`}},
		{"a header limit below 4 KiB",
			input{env: map[string]string{"CACHEGATE_MAX_HEADER_BYTES": "1KiB"}},
			[]string{`CACHEGATE_MAX_HEADER_BYTES: 1024 must be between 4096 and 16777216`}},
		{"an unknown top-level key",
			input{yaml: "addr: :8080\nadress: :9090\n"},
			[]string{`adress: unknown key (config line 2)`}},
		{"an unknown nested key",
			input{yaml: "auth:\n  enableGuard: false\n"},
			[]string{`auth.enableGuard: unknown key (config line 2)`}},
		{"an unknown key in an entity",
			input{yaml: "cache:\n  entities:\n    userCache: {tabel: x}\n"},
			[]string{`cache.entities.userCache.tabel: unknown key (config line 3)`}},
		{"an unknown key in an assignment",
			input{yaml: "cache:\n  settings:\n    assignments:\n      user: {entityKey: userCache, polcy: owner}\n"},
			[]string{`cache.settings.assignments.user.polcy: unknown key (config line 4)`}},
		{"a key set twice",
			input{yaml: "addr: :1\naddr: :2\n"},
			[]string{`addr: set twice (first at line 1) (config line 2)`}},
		{"a list where a value belongs",
			input{yaml: "addr: [a, b]\n"},
			[]string{`addr: must be a single value, not a list or mapping (config line 1)`}},
		{"a value where a section belongs",
			input{yaml: "auth: 5\n"},
			[]string{`auth: must be a mapping (config line 1)`}},
		{"a file that is not a mapping",
			input{yaml: "- a\n- b\n"},
			[]string{`config: the top level must be a mapping of settings (config line 1)`}},
		{"two YAML documents",
			input{yaml: "addr: :1\n---\naddr: :2\n"},
			[]string{`config: the file must hold exactly one YAML document`}},
		{"an unknown policy",
			input{yaml: "cache:\n  settings:\n    assignments:\n      user: {entityKey: userCache, policy: everyone}\n"},
			[]string{`cache.settings.assignments.user.policy: "everyone" must be owner, authenticated or public (config line 4)`}},
		{"an invalid table",
			input{yaml: "cache:\n  entities:\n    userCache: {table: User-Cache}\n"},
			[]string{`cache.entities.userCache.table: "User-Cache" must match ^[a-z_][a-z0-9_]{0,62}$`}},
		{"a table that is one of cachegate's own",
			input{yaml: "cache:\n  entities:\n    userCache: {table: users}\n"},
			[]string{`cache.entities.userCache.table: "users" is one of cachegate's own tables`}},
		{"two entities on one table",
			input{yaml: "cache:\n  entities:\n    a: {table: t}\n    b: {table: t}\n  settings:\n    assignments:\n      x: {entityKey: a}\n"},
			[]string{`cache.entities.b.table: "t" is also the table of cache.entities.a`}},
		{"no assignment at all",
			input{yaml: "cache:\n  settings:\n    assignments: {}\n"},
			[]string{`cache.settings.assignments: at least one assignment is required`}},
		{"entities without userCache and no assignments",
			input{yaml: "cache:\n  entities: {orgCache: {}}\n"},
			[]string{`cache.settings.assignments: at least one assignment is required`}},
		{"an assignment name that is not a path segment",
			input{yaml: "cache:\n  settings:\n    assignments:\n      a/b: {entityKey: userCache}\n"},
			[]string{`cache.settings.assignments: "a/b" is not a valid assignment name: it must match ^[A-Za-z0-9_-]{1,64}$`}},
		{"an unsupported database",
			input{args: []string{"--database", "mysql://root:pw@db/x"}},
			[]string{`database: must be "sqlite:PATH", "sqlite::memory:", "postgres://…" or "postgresql://…"`}},
		{"a bcrypt cost out of range",
			input{env: map[string]string{"CACHEGATE_BCRYPT_COST": "3"}},
			[]string{`CACHEGATE_BCRYPT_COST: 3 must be between 4 and 31`}},
		{"a boolean that is not one",
			input{env: map[string]string{"CACHEGATE_ENABLE_GUARDS": "yes"}},
			[]string{`CACHEGATE_ENABLE_GUARDS: "yes" must be true or false`}},
		{"a bad refresh token source",
			input{args: []string{"--refresh-from", "form:refreshToken"}},
			[]string{`refresh-from: "form:refreshToken" must be body:FIELD, header:NAME, cookie:NAME or query:NAME`}},
		{"a bad listen address",
			input{args: []string{"--addr", "8080"}},
			[]string{`addr: "8080" must be host:port, such as 127.0.0.1:8080 or :8080`}},
		{"metrics on the service address",
			input{args: []string{"--addr", ":8080", "--metrics-addr", ":8080"}},
			[]string{`metricsAddr: ":8080" must differ from addr (leave it empty to serve /metrics on addr)`}},
		{"data larger than the body",
			input{args: []string{"--body-bytes", "64KiB", "--data-bytes", "1MiB"}},
			[]string{`limits.dataBytes: 1048576 must not exceed limits.bodyBytes (65536)`}},
		{"an unknown error format",
			input{args: []string{"--error-format", "nestjs"}},
			[]string{`error-format: "nestjs" must be cachegate or rockets`}},
		{"a bad log level",
			input{env: map[string]string{"CACHEGATE_LOG_LEVEL": "verbose"}},
			[]string{`CACHEGATE_LOG_LEVEL: "verbose" must be debug, info, warn or error`}},
		{"every problem at once, in a stable order",
			input{
				args: []string{"--access-token-ttl", "10", "--log-format", "xml"},
				env:  map[string]string{"CACHEGATE_SWEEP_BATCH": "0"},
				yaml: "auth:\n  passwordAlgorithm: md5\ncache:\n  settings:\n    assignments:\n      org: {entityKey: nope}\n",
			},
			[]string{
				`access-token-ttl: "10" must be a duration such as 15m or 30d`,
				`auth.passwordAlgorithm: "md5" must be bcrypt or argon2id (config line 2)`,
				`log-format: "xml" must be text or json`,
				`CACHEGATE_SWEEP_BATCH: 0 must be between 1 and 100000`,
				`cache.settings.assignments.org.entityKey: "nope" is not a key of cache.entities`,
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, tc.in)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", c)
			}
			if got := lines(err); !slices.Equal(got, tc.want) {
				t.Fatalf("error lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if strings.Contains(err.Error(), short) || strings.Contains(err.Error(), "pw@") {
				t.Fatalf("the error quotes a secret: %v", err)
			}
			if c.Addr != "" || c.Cache.Entities != nil {
				t.Fatalf("a failed Load returned a configuration: %+v", c)
			}
		})
	}
}

func TestABrokenFileReportsABoundedNumberOfProblems(t *testing.T) {
	t.Parallel()
	_, err := load(t, input{yaml: strings.Repeat("nope: 1\n", 1000)})
	got := lines(err)
	if len(got) != 21 || got[20] != "config: more problems from line 21 on are not shown" {
		t.Fatalf("%d lines, the last %q", len(got), got[len(got)-1])
	}
}

func TestYAMLSyntaxErrorIsOneLine(t *testing.T) {
	t.Parallel()
	_, err := load(t, input{yaml: "addr: :1\n  bad: [\n"})
	got := lines(err)
	if len(got) != 1 || !strings.HasPrefix(got[0], "config: yaml: line ") {
		t.Fatalf("error lines %q, want one line starting with config: yaml: line", got)
	}
}

func TestAFlagOverridesABrokenEnvironmentVariable(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, input{args: []string{"--bcrypt-cost=12"}, env: map[string]string{"CACHEGATE_BCRYPT_COST": "huge"}})
	if c.Auth.BcryptCost != 12 {
		t.Fatalf("bcrypt cost = %d, want 12", c.Auth.BcryptCost)
	}
}
