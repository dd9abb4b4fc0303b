package config_test

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/domain"
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, input{})
	if !reflect.DeepEqual(c, config.Default()) {
		t.Fatalf("Load without input = %+v, want Default() %+v", c, config.Default())
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr", c.Addr, "127.0.0.1:8080"},
		{"database", c.Database, "sqlite:cachegate.db"},
		{"metricsAddr", c.MetricsAddr, ""},
		{"console", c.Console, true},
		{"accessTokenTTL", c.AccessTokenTTL, 15 * time.Minute},
		{"refreshTokenTTL", c.RefreshTokenTTL, 30 * 24 * time.Hour},
		{"shutdownTimeout", c.ShutdownTimeout, 15 * time.Second},
		{"entities", c.Cache.Entities, map[string]config.Entity{"userCache": {Table: "user_cache"}}},
		{"assignments", c.Cache.Settings.Assignments, map[string]config.Assignment{
			"user": {EntityKey: "userCache", Policy: domain.PolicyOwner}}},
		{"expiresIn", c.Cache.Settings.ExpiresIn, (*time.Duration)(nil)},
		{"enableGuards", c.Auth.EnableGuards, true},
		{"issuer", c.Auth.Issuer, "cachegate"},
		{"audience", c.Auth.Audience, "cachegate"},
		{"hs256Secret", c.Auth.HS256Secret.IsSet(), false},
		{"usernameField", c.Auth.UsernameField, "username"},
		{"passwordField", c.Auth.PasswordField, "password"},
		{"refreshFrom", c.Auth.RefreshFrom, config.TokenSource{In: config.InBody, Name: "refreshToken"}},
		{"passwordAlgorithm", c.Auth.PasswordAlgorithm, config.Bcrypt},
		{"bcryptCost", c.Auth.BcryptCost, 10},
		{"refreshReuseGrace", c.Auth.RefreshReuseGrace, 10 * time.Second},
		{"throttle", c.Auth.Throttle, config.Throttle{UsernameLimit: 10, AddressLimit: 100, Window: 15 * time.Minute}},
		{"trustedProxies", c.TrustedProxies, []string(nil)},
		{"auditRetention", c.AuditRetention, 90 * 24 * time.Hour},
		{"limits", c.Limits, config.Limits{BodyBytes: 1 << 20, HeaderBytes: 64 << 10, DataBytes: 256 << 10, ListMax: 1000, ListDefault: 100}},
		{"log", c.Log, config.Log{Format: config.LogText, Level: slog.LevelInfo}},
		{"sweep", c.Sweep, config.Sweep{Interval: time.Minute, Batch: 1000}},
		{"events", c.Events, config.Events{Retention: time.Hour, Heartbeat: 15 * time.Second, Retry: 2 * time.Second}},
		{"caps", c.Caps, config.Caps{ListsPerUser: 4, StreamsPerUser: 16, ConnsPerAddress: 256}},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if err := config.Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	type layer struct{ flag, env, yaml string }
	settings := []struct {
		name   string
		flag   string // flag name; the env var and YAML key follow
		env    string
		yamlAt func(v string) string
		values layer
		get    func(config.Config) any
		def    any
	}{
		{name: "addr", flag: "addr", env: "CACHEGATE_ADDR",
			yamlAt: func(v string) string { return "addr: " + v },
			values: layer{":9001", ":9002", ":9003"},
			get:    func(c config.Config) any { return c.Addr }, def: "127.0.0.1:8080"},
		{name: "access token lifetime", flag: "access-token-ttl", env: "CACHEGATE_ACCESS_TOKEN_TTL",
			yamlAt: func(v string) string { return "accessTokenTTL: " + v },
			values: layer{"1m", "2h", "3d"},
			get:    func(c config.Config) any { return c.AccessTokenTTL }, def: 15 * time.Minute},
		{name: "bcrypt cost", flag: "bcrypt-cost", env: "CACHEGATE_BCRYPT_COST",
			yamlAt: func(v string) string { return "auth:\n  bcryptCost: " + v },
			values: layer{"11", "12", "13"},
			get:    func(c config.Config) any { return c.Auth.BcryptCost }, def: 10},
		{name: "guards", flag: "enable-guards", env: "CACHEGATE_ENABLE_GUARDS",
			yamlAt: func(v string) string { return "auth:\n  enableGuards: " + v },
			values: layer{"false", "true", "false"},
			get:    func(c config.Config) any { return c.Auth.EnableGuards }, def: true},
		{name: "log level", flag: "log-level", env: "CACHEGATE_LOG_LEVEL",
			yamlAt: func(v string) string { return "log:\n  level: " + v },
			values: layer{"debug", "warn", "error"},
			get:    func(c config.Config) any { return c.Log.Level.String() }, def: "INFO"},
		{name: "default expiration", flag: "cache-expires-in", env: "CACHEGATE_CACHE_EXPIRES_IN",
			yamlAt: func(v string) string { return "cache:\n  settings:\n    expiresIn: " + v },
			values: layer{"1h", "2d", "3w"},
			get: func(c config.Config) any {
				if c.Cache.Settings.ExpiresIn == nil {
					return "none"
				}
				return c.Cache.Settings.ExpiresIn.String()
			}, def: "none"},
	}
	for _, s := range settings {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			in := func(flag, env, yaml bool) input {
				var i input
				if flag {
					i.args = []string{"--" + s.flag + "=" + s.values.flag}
				}
				if env {
					i.env = map[string]string{s.env: s.values.env}
				}
				if yaml {
					i.yaml = s.yamlAt(s.values.yaml) + "\n"
				}
				return i
			}
			fromFlag := s.get(mustLoad(t, in(true, false, false)))
			fromEnv := s.get(mustLoad(t, in(false, true, false)))
			fromYAML := s.get(mustLoad(t, in(false, false, true)))
			// Each layer must differ from the one below it, or a case
			// below could pass with the wrong layer winning.
			if fromYAML == s.def || fromEnv == fromYAML || fromFlag == fromEnv {
				t.Fatalf("layers do not differ: default %v, yaml %v, env %v, flag %v", s.def, fromYAML, fromEnv, fromFlag)
			}
			cases := []struct {
				name            string
				flag, env, yaml bool
				want            any
			}{
				{"the default applies when no layer sets it", false, false, false, s.def},
				{"YAML beats the default", false, false, true, fromYAML},
				{"env beats YAML", false, true, true, fromEnv},
				{"a flag beats env and YAML", true, true, true, fromFlag},
				{"a flag beats env", true, true, false, fromFlag},
			}
			for _, c := range cases {
				if got := s.get(mustLoad(t, in(c.flag, c.env, c.yaml))); got != c.want {
					t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				}
			}
		})
	}
}

func TestAnEmptyEnvironmentVariableCountsAsUnset(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, input{env: map[string]string{"CACHEGATE_ADDR": ""}, yaml: "addr: :7000\n"})
	if c.Addr != ":7000" {
		t.Fatalf("addr = %q, want the YAML value :7000", c.Addr)
	}
}

func TestTheConfigFlagBeatsTheConfigEnvironmentVariable(t *testing.T) {
	t.Parallel()
	byFlag := writeFile(t, "flag.yaml", "addr: :7001\n")
	byEnv := writeFile(t, "env.yaml", "addr: :7002\n")
	c := mustLoad(t, input{args: []string{"--config", byFlag}, env: map[string]string{"CACHEGATE_CONFIG": byEnv}})
	if c.Addr != ":7001" || c.ConfigFile != byFlag {
		t.Fatalf("addr %q from %q, want :7001 from %q", c.Addr, c.ConfigFile, byFlag)
	}
}

func TestContractExampleParses(t *testing.T) {
	t.Parallel()
	const example = `addr: 127.0.0.1:8080
database: sqlite:cachegate.db
cache:
  entities:                 # entity key -> its table (table optional)
    userCache: {table: user_cache}
    orgCache: {}
  settings:
    expiresIn: null         # default expiration for entries created without one
    assignments:            # route /cache/<name> -> entity, access policy
      user: {entityKey: userCache, policy: owner}
      org:  {entityKey: orgCache, policy: authenticated}
auth:                       # names of the auth keys are the project's to choose
  enableGuards: true
`
	c := mustLoad(t, input{yaml: example})
	want := config.Default()
	want.ConfigFile = c.ConfigFile
	want.Cache = config.Cache{
		Entities: map[string]config.Entity{
			"userCache": {Table: "user_cache"},
			"orgCache":  {Table: "org_cache"},
		},
		Settings: config.CacheSettings{Assignments: map[string]config.Assignment{
			"user": {EntityKey: "userCache", Policy: domain.PolicyOwner},
			"org":  {EntityKey: "orgCache", Policy: domain.PolicyAuthenticated},
		}, MaxEntries: 10000, MaxBytes: 64 << 20},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
}

func TestQuotasComeFromTheDefaultsAndEachAssignment(t *testing.T) {
	t.Parallel()
	const file = `cache:
  entities: {userCache: {}, orgCache: {}}
  settings:
    maxBytes: 8MiB
    assignments:
      user: {entityKey: userCache}
      org: {entityKey: orgCache, maxEntries: 50, maxBytes: 0}
`
	for _, tc := range []struct {
		name      string
		in        input
		user, org domain.Quota
	}{
		{"defaults", input{}, domain.DefaultQuota(), domain.Quota{}},
		{"the file's defaults and one assignment's own", input{yaml: file},
			domain.Quota{MaxEntries: 10000, MaxBytes: 8 << 20}, domain.Quota{MaxEntries: 50}},
		{"flags and environment set the defaults; the assignment's own still win",
			input{yaml: file, args: []string{"--quota-max-entries", "0"}, env: map[string]string{"CACHEGATE_QUOTA_MAX_BYTES": "1GiB"}},
			domain.Quota{MaxBytes: 1 << 30}, domain.Quota{MaxEntries: 50}},
		{"off everywhere", input{args: []string{"--quota-max-entries", "0", "--quota-max-bytes", "0"}},
			domain.Quota{}, domain.Quota{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, tc.in)
			if got := c.Cache.Settings.Quota("user"); got != tc.user {
				t.Errorf("quota of user = %+v, want %+v", got, tc.user)
			}
			if _, ok := c.Cache.Settings.Assignments["org"]; ok {
				if got := c.Cache.Settings.Quota("org"); got != tc.org {
					t.Errorf("quota of org = %+v, want %+v", got, tc.org)
				}
			}
		})
	}
}

func TestFullFileParses(t *testing.T) {
	t.Parallel()
	secretFile := writeFile(t, "hs256", "0123456789abcdef0123456789abcdef\n")
	keySecretFile := writeFile(t, "kek", "  \tkey-encryption-secret-of-32-bytes!!\n\n")
	metricsTokenFile := writeFile(t, "metrics", "metrics-token-0123456789\n")
	c := mustLoad(t, input{yaml: `
addr: 0.0.0.0:80
metricsTokenFile: ` + metricsTokenFile + `
errorFormat: Rockets
database: postgres://app:pw@db:5432/cache?sslmode=disable
databaseTimeout: 2s
queryTimeout: 500ms
databaseUserStatements: 3
databaseUserTime: 250ms
databaseUserBurst: 2s
metricsAddr: 127.0.0.1:9090
accessTokenTTL: 5m
refreshTokenTTL: 1w
shutdownTimeout: 30s
trustedProxies: [10.0.0.0/8, 192.0.2.7]
auditRetention: 30d
auditFoldWindow: 10m
console: false
cache:
  entities:
    orgCache:
  settings:
    expiresIn: 1h30m
    maxEntries: 500
    maxBytes: 1MiB
    assignments:
      org: {entityKey: orgCache, maxBytes: 0}
auth:
  enableGuards: false
  issuer: https://auth.example
  audience: api
  clientId: billing
  keyPublishAhead: 5m
  hs256SecretFile: ` + secretFile + `
  usernameField: email
  passwordField: pass
  refreshFrom: cookie:refresh
  passwordAlgorithm: argon2id
  bcryptCost: 12
  refreshReuseGrace: 3s
  sessionMax: 7d
  maxSessionsPerUser: 20
  keyEncryptionSecretFile: ` + keySecretFile + `
  throttle: {usernameLimit: 5, addressLimit: 0, window: 1h}
limits: {bodyBytes: 2MiB, headerBytes: 32KiB, dataBytes: 1048576, listMax: 500, listDefault: 50}
log: {format: json, level: debug}
sweep: {interval: 30s, batch: 200}
events: {retention: 2h, heartbeat: 5s, retry: 750ms}
caps: {listsPerUser: 2, streamsPerUser: 0, connsPerAddress: 64}
`})
	hour30 := 90 * time.Minute
	want := config.Config{
		Addr: "0.0.0.0:80", Database: "postgres://app:pw@db:5432/cache?sslmode=disable", DatabaseTimeout: 2 * time.Second,
		QueryTimeout: 500 * time.Millisecond, DatabaseUserStatements: 3,
		DatabaseUserTime: 250 * time.Millisecond, DatabaseUserBurst: 2 * time.Second,
		MetricsAddr: "127.0.0.1:9090", AccessTokenTTL: 5 * time.Minute, RefreshTokenTTL: 7 * 24 * time.Hour,
		ShutdownTimeout: 30 * time.Second, ConfigFile: c.ConfigFile,
		TrustedProxies: []string{"10.0.0.0/8", "192.0.2.7"}, AuditRetention: 30 * 24 * time.Hour, AuditFoldWindow: 10 * time.Minute,
		MetricsToken: config.NewSecret("metrics-token-0123456789"), MetricsTokenFile: metricsTokenFile,
		ErrorFormat: config.ErrorFormatRockets,
		Console:     false,
		Cache: config.Cache{
			Entities: map[string]config.Entity{"orgCache": {Table: "org_cache"}},
			Settings: config.CacheSettings{ExpiresIn: &hour30, Assignments: map[string]config.Assignment{
				"org": {EntityKey: "orgCache", Policy: domain.PolicyOwner, MaxBytes: new(int64)}},
				MaxEntries: 500, MaxBytes: 1 << 20},
		},
		Auth: config.Auth{
			Issuer: "https://auth.example", Audience: "api", ClientID: "billing", KeyPublishAhead: 5 * time.Minute,
			HS256Secret:     config.NewSecret("0123456789abcdef0123456789abcdef"),
			HS256SecretFile: secretFile, UsernameField: "email", PasswordField: "pass",
			RefreshFrom:       config.TokenSource{In: config.InCookie, Name: "refresh"},
			PasswordAlgorithm: config.Argon2id, BcryptCost: 12, RefreshReuseGrace: 3 * time.Second,
			SessionMax:              7 * 24 * time.Hour,
			MaxSessionsPerUser:      20,
			KeyEncryptionSecret:     config.NewSecret("key-encryption-secret-of-32-bytes!!"),
			KeyEncryptionSecretFile: keySecretFile,
			Throttle:                config.Throttle{UsernameLimit: 5, AddressLimit: 0, Window: time.Hour},
		},
		Limits: config.Limits{BodyBytes: 2 << 20, HeaderBytes: 32 << 10, DataBytes: 1 << 20, ListMax: 500, ListDefault: 50},
		Log:    config.Log{Format: config.LogJSON, Level: slog.LevelDebug},
		Sweep:  config.Sweep{Interval: 30 * time.Second, Batch: 200},
		Events: config.Events{Retention: 2 * time.Hour, Heartbeat: 5 * time.Second, Retry: 750 * time.Millisecond},
		Caps:   config.Caps{ListsPerUser: 2, StreamsPerUser: 0, ConnsPerAddress: 64},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
	if c.Auth.HS256Secret.Reveal() != "0123456789abcdef0123456789abcdef" {
		t.Fatal("the secret file's trailing newline was kept or the secret lost")
	}
}

func TestCacheDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		yaml        string
		entities    map[string]config.Entity
		assignments map[string]config.Assignment
	}{
		{"a cache section with only expiresIn keeps the default assignment",
			"cache:\n  settings:\n    expiresIn: 2h\n",
			map[string]config.Entity{"userCache": {Table: "user_cache"}},
			map[string]config.Assignment{"user": {EntityKey: "userCache", Policy: domain.PolicyOwner}}},
		{"assignments alone may use the default entity",
			"cache:\n  settings:\n    assignments:\n      me: {entityKey: userCache, policy: public}\n",
			map[string]config.Entity{"userCache": {Table: "user_cache"}},
			map[string]config.Assignment{"me": {EntityKey: "userCache", Policy: domain.PolicyPublic}}},
		{"entities alone keep the default assignment when they define userCache",
			"cache:\n  entities:\n    userCache: {table: my_cache}\n",
			map[string]config.Entity{"userCache": {Table: "my_cache"}},
			map[string]config.Assignment{"user": {EntityKey: "userCache", Policy: domain.PolicyOwner}}},
		{"a table defaults to the snake case of its key",
			"cache:\n  entities:\n    HTTPSessionCache2:\n  settings:\n    assignments:\n      s: {entityKey: HTTPSessionCache2}\n",
			map[string]config.Entity{"HTTPSessionCache2": {Table: "http_session_cache2"}},
			map[string]config.Assignment{"s": {EntityKey: "HTTPSessionCache2", Policy: domain.PolicyOwner}}},
		{"two assignments may share an entity",
			"cache:\n  settings:\n    assignments:\n      mine: {entityKey: userCache}\n      all: {entityKey: userCache, policy: authenticated}\n",
			map[string]config.Entity{"userCache": {Table: "user_cache"}},
			map[string]config.Assignment{
				"mine": {EntityKey: "userCache", Policy: domain.PolicyOwner},
				"all":  {EntityKey: "userCache", Policy: domain.PolicyAuthenticated}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, input{yaml: tc.yaml})
			if !reflect.DeepEqual(c.Cache.Entities, tc.entities) {
				t.Errorf("entities = %v, want %v", c.Cache.Entities, tc.entities)
			}
			if !reflect.DeepEqual(c.Cache.Settings.Assignments, tc.assignments) {
				t.Errorf("assignments = %v, want %v", c.Cache.Settings.Assignments, tc.assignments)
			}
		})
	}
}

func TestDurations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want time.Duration // 0: rejected
	}{
		{"30d", 30 * 24 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{"15m", 15 * time.Minute},
		{"2 days", 48 * time.Hour},
		{"1h0m0s", time.Hour},
		{"250us", 250 * time.Microsecond},
		{"10", 0},
		{"0", 0},
		{"-1h", 0},
		{"soon", 0},
		{"", 0},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, input{args: []string{"--refresh-token-ttl=" + tc.text}})
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("%q accepted as %v", tc.text, c.RefreshTokenTTL)
			case tc.want == 0:
				want := `refresh-token-ttl: "` + tc.text + `" must be a duration such as 15m or 30d`
				if got := lines(err); len(got) != 1 || got[0] != want {
					t.Fatalf("error %q, want %q", got, want)
				}
			case err != nil:
				t.Fatalf("%q rejected: %v", tc.text, err)
			case c.RefreshTokenTTL != tc.want:
				t.Fatalf("%q = %v, want %v", tc.text, c.RefreshTokenTTL, tc.want)
			}
		})
	}
}

func TestRefreshReuseGraceAcceptsZero(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, input{args: []string{"--refresh-reuse-grace", "5s"}, env: map[string]string{"CACHEGATE_REFRESH_REUSE_GRACE": "0"}})
	if c.Auth.RefreshReuseGrace != 5*time.Second {
		t.Fatalf("grace = %v, want 5s", c.Auth.RefreshReuseGrace)
	}
	c = mustLoad(t, input{env: map[string]string{"CACHEGATE_REFRESH_REUSE_GRACE": "0"}})
	if c.Auth.RefreshReuseGrace != 0 {
		t.Fatalf("grace = %v, want 0", c.Auth.RefreshReuseGrace)
	}
	c = mustLoad(t, input{yaml: "auth:\n  refreshReuseGrace: 0\n"})
	if c.Auth.RefreshReuseGrace != 0 {
		t.Fatalf("grace from YAML 0 = %v, want 0 (off), not the 10s default", c.Auth.RefreshReuseGrace)
	}
}

func TestAMetricsTokenTooShortOrNotABearerTokenIsRefusedWithoutQuotingIt(t *testing.T) {
	t.Parallel()
	for name, token := range map[string]string{
		"too short":           "short-token",
		"with a space":        "metrics token 0123456789",
		"with a quote":        `metrics"token0123456789`,
		"only white space":    "   \n",
		"with a control char": "metrics\x01token0123456789",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, "metrics", token)
			_, err := load(t, input{args: []string{"--metrics-token-file", file}})
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.TrimSpace(token) != "" && strings.Contains(err.Error(), strings.TrimSpace(token)) {
				t.Fatalf("the error quotes the token: %v", err)
			}
		})
	}
}

// --key-publish-ahead is 0 (sign at once) or at least the JWKS max-age,
// so that a client caching the key set knows a rotated key before its
// first token; a shorter value stops start-up with a clear line.
func TestKeyPublishAheadBelowTheJWKSMaxAgeIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		want time.Duration
		ok   bool
	}{
		{"3s", 0, false}, {"59s", 0, false}, {"59.9s", 0, false},
		{"0", 0, true}, {"1m", time.Minute, true}, {"2m", 2 * time.Minute, true}, {"1d", domain.Day, true},
	} {
		cfg, err := load(t, input{args: []string{"--key-publish-ahead", c.text}})
		switch {
		case c.ok && (err != nil || cfg.Auth.KeyPublishAhead != c.want):
			t.Errorf("--key-publish-ahead %s: %v, %v; want %v", c.text, cfg.Auth.KeyPublishAhead, err, c.want)
		case !c.ok && err == nil:
			t.Errorf("--key-publish-ahead %s accepted", c.text)
		case !c.ok:
			if got := lines(err); len(got) != 1 || !strings.HasPrefix(got[0], "key-publish-ahead: ") ||
				!strings.Contains(got[0], "below the JWKS max-age of 1m0s") || !strings.Contains(got[0], "0 to sign at once") {
				t.Errorf("--key-publish-ahead %s: error %q, want one line naming the flag, the max-age and 0", c.text, got)
			}
		}
	}
	if _, err := load(t, input{env: map[string]string{"CACHEGATE_KEY_PUBLISH_AHEAD": "10s"}}); err == nil {
		t.Error("CACHEGATE_KEY_PUBLISH_AHEAD=10s accepted")
	}
}
