package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// setting is one scalar setting: its names, how its text becomes a value
// of Config (parse: syntax only) and how that value is checked (check:
// ranges, on the typed value, so Validate can run it too).
type setting struct {
	flag, key, def, usage string
	arg                   string // the value's name in -help
	noFlag, isBool        bool
	isList                bool  // YAML may give a list; flags and env a comma-separated text
	group                 Group // the commands that read it; 0 (none named): every command
	parse                 func(c *Config, v string) error
	check                 func(c Config) error
}

// env returns the setting's environment variable.
func (s setting) env() string { return envName(s.flag) }

// envName turns a flag name into its environment variable.
func envName(flag string) string {
	return "CACHEGATE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// configFlag names the YAML file to load; it has no YAML key of its own.
const configFlag = "config"

// hs256 secret settings are two ways to give one value; see Load.
const (
	secretFlag     = "hs256-secret"
	secretFileFlag = "hs256-secret-file"
)

// minSecretBytes is the shortest HS256 secret accepted (RFC 7518 3.2).
const minSecretBytes = 32

// maxSecretFileBytes bounds the secret file read.
const maxSecretFileBytes = 64 << 10

// settings returns the table of scalar settings. Its defaults agree with
// Default, which a test pins.
func settings() []setting {
	return []setting{
		{flag: "addr", group: GroupServer, arg: "host:port", key: "addr", def: "127.0.0.1:8080", usage: "HTTP listen address",
			parse: func(c *Config, v string) error { c.Addr = v; return nil },
			check: func(c Config) error { return checkAddr(c.Addr) }},
		{flag: "database", group: GroupStorage, arg: "url", key: "database", def: "sqlite:cachegate.db",
			usage: "database URL: sqlite:PATH, sqlite::memory: or postgres://user:pass@host:port/db",
			parse: func(c *Config, v string) error { c.Database = v; return nil },
			check: func(c Config) error { return checkDatabase(c.Database) }},
		{flag: "database-timeout", group: GroupStorage, arg: "duration", key: "databaseTimeout", def: "5s",
			usage: "longest wait for the database per call (connection, statement, rows); past it 503 DATABASE_UNAVAILABLE",
			parse: durationInto(func(c *Config) *time.Duration { return &c.DatabaseTimeout }),
			check: func(c Config) error {
				if c.DatabaseTimeout <= 0 || c.DatabaseTimeout > 10*time.Minute {
					return fmt.Errorf("%s must be positive and at most 10m", c.DatabaseTimeout)
				}
				return nil
			}},
		{flag: "query-timeout", group: GroupServer, arg: "duration", key: "queryTimeout", def: "2s",
			usage: "longest time the database may spend on one statement of a list (the count, each page); past it 422 QUERY_TOO_EXPENSIVE",
			parse: durationInto(func(c *Config) *time.Duration { return &c.QueryTimeout }),
			check: func(c Config) error {
				if c.QueryTimeout <= 0 || c.QueryTimeout > 10*time.Minute {
					return fmt.Errorf("%s must be positive and at most 10m", c.QueryTimeout)
				}
				return nil
			}},
		{flag: "database-user-statements", group: GroupServer, arg: "n", key: "databaseUserStatements", def: "0",
			usage: "database calls one user (or anonymous client address) may run at once; beyond, 429 TOO_MANY_REQUESTS; 0: half the connection pool",
			parse: intInto(func(c *Config) *int { return &c.DatabaseUserStatements }),
			check: func(c Config) error { return checkRange(int64(c.DatabaseUserStatements), 0, 10_000) }},
		{flag: "database-user-time", group: GroupServer, arg: "duration", key: "databaseUserTime", def: "500ms",
			usage: "database time one user (or anonymous client address) may use per second on this replica; once its budget is spent, 429 TOO_MANY_REQUESTS until it refills; 0: no budget",
			parse: func(c *Config, v string) (err error) { c.DatabaseUserTime, err = parseDurationOrZero(v); return err },
			check: func(c Config) error { return checkBudget(c.DatabaseUserTime, time.Second) }},
		{flag: "database-user-burst", group: GroupServer, arg: "duration", key: "databaseUserBurst", def: "5s",
			usage: "database time one user (or anonymous client address) may use at once before database-user-time paces it",
			parse: durationInto(func(c *Config) *time.Duration { return &c.DatabaseUserBurst }),
			check: func(c Config) error { return checkBudget(c.DatabaseUserBurst, 10*time.Minute) }},
		{flag: "metrics-addr", group: GroupServer, arg: "host:port", key: "metricsAddr",
			usage: "separate listen address for /metrics, served there without authentication (default none: /metrics on addr, for the metrics token or an administrator)",
			parse: func(c *Config, v string) error { c.MetricsAddr = v; return nil },
			check: func(c Config) error {
				if c.MetricsAddr == "" {
					return nil
				}
				return checkAddr(c.MetricsAddr)
			}},
		{flag: "metrics-token-file", group: GroupServer, arg: "file", key: "metricsTokenFile",
			usage: "file holding the token (at least 16 bytes) scrapers send as Authorization: Bearer to /metrics on addr (default none: only an administrator's access token reads /metrics on addr)",
			parse: readMetricsTokenFile},
		{flag: "error-format", group: GroupServer, arg: "format", key: "errorFormat", def: "cachegate",
			usage: "shape of 400 validation errors: cachegate (message a string, details) or rockets (message an array of {property, constraints})",
			parse: func(c *Config, v string) error { c.ErrorFormat = strings.ToLower(strings.TrimSpace(v)); return nil },
			check: func(c Config) error {
				if c.ErrorFormat != ErrorFormatCachegate && c.ErrorFormat != ErrorFormatRockets {
					return fmt.Errorf("%q must be cachegate or rockets", c.ErrorFormat)
				}
				return nil
			}},
		{flag: "trusted-proxies", group: GroupServer, arg: "cidrs", key: "trustedProxies", isList: true,
			usage: "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For is believed (default none)",
			parse: parseTrustedProxies,
			check: func(c Config) error { return checkTrustedProxies(c.TrustedProxies) }},
		{flag: "cors-origins", group: GroupServer, arg: "origins", key: "cors.origins", isList: true,
			usage: "comma-separated origins (scheme://host[:port]) whose browser apps may call the API, or * for any (default none: no CORS headers)",
			parse: parseCORSOrigins,
			check: func(c Config) error { return checkCORSOrigins(c.CORS) }},
		{flag: "cors-credentials", group: GroupServer, key: "cors.credentials", def: "false", isBool: true,
			usage: "let the CORS origins send credentials (cookies); not with --cors-origins *",
			parse: func(c *Config, v string) (err error) { c.CORS.Credentials, err = parseBool(v); return err },
			check: func(c Config) error {
				if c.CORS.Credentials && c.CORS.AnyOrigin() {
					return errors.New("cannot be used with the origin *: browsers refuse credentials with a wildcard origin; list the origins")
				}
				return nil
			}},
		{flag: "console", group: GroupServer, key: "console", def: "true", isBool: true,
			usage: "serve the web console at /console/",
			parse: func(c *Config, v string) (err error) { c.Console, err = parseBool(v); return err }},
		{flag: "setup-from-anywhere", group: GroupServer, key: "setupFromAnywhere", def: "false", isBool: true,
			usage: "accept the first admin's one-time set-up link from any address, not only from this machine (loopback)",
			parse: func(c *Config, v string) (err error) { c.SetupFromAnywhere, err = parseBool(v); return err }},
		{flag: "access-token-ttl", group: GroupKeys, arg: "duration", key: "accessTokenTTL", def: "15m", usage: "access token lifetime",
			parse: durationInto(func(c *Config) *time.Duration { return &c.AccessTokenTTL }),
			check: func(c Config) error { return checkPositive(c.AccessTokenTTL) }},
		{flag: "refresh-token-ttl", group: GroupKeys, arg: "duration", key: "refreshTokenTTL", def: "30d", usage: "refresh token lifetime",
			parse: durationInto(func(c *Config) *time.Duration { return &c.RefreshTokenTTL }),
			check: func(c Config) error { return checkPositive(c.RefreshTokenTTL) }},
		{flag: "shutdown-timeout", group: GroupServer, arg: "duration", key: "shutdownTimeout", def: "15s",
			usage: "how long in-flight requests may finish on shutdown",
			parse: durationInto(func(c *Config) *time.Duration { return &c.ShutdownTimeout }),
			check: func(c Config) error { return checkPositive(c.ShutdownTimeout) }},
		{flag: "cache-expires-in", group: GroupServer, arg: "duration", key: "cache.settings.expiresIn", def: "none",
			usage: "expiration of entries created with expiresIn null (none: never)",
			parse: func(c *Config, v string) error {
				if strings.EqualFold(strings.TrimSpace(v), "none") {
					c.Cache.Settings.ExpiresIn = nil
					return nil
				}
				d, err := parseDuration(v)
				if err != nil {
					return fmt.Errorf(`%q must be "none" or a duration such as 1h or 7d`, v)
				}
				c.Cache.Settings.ExpiresIn = &d
				return nil
			},
			check: func(c Config) error {
				if p := c.Cache.Settings.ExpiresIn; p != nil {
					return checkPositive(*p)
				}
				return nil
			}},
		{flag: "quota-max-entries", group: GroupServer, arg: "n", key: "cache.settings.maxEntries", def: "10000",
			usage: "most entries one assignee may keep in an assignment, deleted and expired ones until removed, counted in the database (0: no limit); an assignment's maxEntries replaces it",
			parse: func(c *Config, v string) error {
				n, err := parseInt(v)
				c.Cache.Settings.MaxEntries = int64(n)
				return err
			},
			check: func(c Config) error { return checkRange(c.Cache.Settings.MaxEntries, 0, maxQuotaEntries) }},
		{flag: "quota-max-bytes", group: GroupServer, arg: "size", key: "cache.settings.maxBytes", def: "64MiB",
			usage: "most bytes one assignee's writes may keep in an assignment: data, and the changes and idempotency records kept of it, counted in the database (0: no limit); an assignment's maxBytes replaces it",
			parse: func(c *Config, v string) (err error) {
				c.Cache.Settings.MaxBytes, err = parseSizeUpTo(v, maxQuotaBytes)
				return err
			},
			check: func(c Config) error { return checkRange(c.Cache.Settings.MaxBytes, 0, maxQuotaBytes) }},
		{flag: "enable-guards", group: GroupServer, key: "auth.enableGuards", def: "true", isBool: true,
			usage: "guard every non-public route with the access-token guard",
			parse: func(c *Config, v string) (err error) { c.Auth.EnableGuards, err = parseBool(v); return err }},
		{flag: "issuer", group: GroupKeys, arg: "string", key: "auth.issuer", def: "cachegate", usage: "iss claim of issued tokens",
			parse: func(c *Config, v string) error { c.Auth.Issuer = v; return nil },
			check: func(c Config) error { return checkNonEmpty(c.Auth.Issuer) }},
		{flag: "audience", group: GroupKeys, arg: "string", key: "auth.audience", def: "cachegate", usage: "aud claim of issued tokens",
			parse: func(c *Config, v string) error { c.Auth.Audience = v; return nil },
			check: func(c Config) error { return checkNonEmpty(c.Auth.Audience) }},
		{flag: "client-id", group: GroupKeys, arg: "string", key: "auth.clientId", def: "cachegate", usage: "client_id claim of access tokens (RFC 9068)",
			parse: func(c *Config, v string) error { c.Auth.ClientID = v; return nil },
			check: func(c Config) error { return checkNonEmpty(c.Auth.ClientID) }},
		{flag: secretFlag, group: GroupKeys, key: "auth.hs256Secret", noFlag: true,
			usage: "HS256 signing secret, at least 32 bytes (environment or YAML only)",
			parse: func(c *Config, v string) error { c.Auth.HS256Secret = NewSecret(v); return nil },
			check: checkSecret},
		{flag: secretFileFlag, group: GroupKeys, arg: "file", key: "auth.hs256SecretFile",
			usage: "file holding the HS256 signing secret (default none: the stored EdDSA keys sign)",
			parse: readSecretFile,
			check: checkSecret},
		{flag: "username-field", group: GroupServer, arg: "name", key: "auth.usernameField", def: "username", usage: "login body field of the username",
			parse: func(c *Config, v string) error { c.Auth.UsernameField = v; return nil },
			check: func(c Config) error { return checkNonEmpty(c.Auth.UsernameField) }},
		{flag: "password-field", group: GroupServer, arg: "name", key: "auth.passwordField", def: "password", usage: "login body field of the password",
			parse: func(c *Config, v string) error { c.Auth.PasswordField = v; return nil },
			check: func(c Config) error { return checkNonEmpty(c.Auth.PasswordField) }},
		{flag: "refresh-from", group: GroupServer, arg: "in:name", key: "auth.refreshFrom", def: "body:refreshToken",
			usage: "where the refresh token is read: body:FIELD, header:NAME, cookie:NAME or query:NAME",
			parse: parseRefreshFrom,
			check: func(c Config) error { return checkTokenSource(c.Auth.RefreshFrom) }},
		{flag: "password-algorithm", group: GroupPasswords, arg: "name", key: "auth.passwordAlgorithm", def: "bcrypt",
			usage: "hash of new passwords: bcrypt or argon2id",
			parse: func(c *Config, v string) error { c.Auth.PasswordAlgorithm = PasswordAlgorithm(v); return nil },
			check: func(c Config) error {
				if a := c.Auth.PasswordAlgorithm; a != Bcrypt && a != Argon2id {
					return fmt.Errorf("%q must be bcrypt or argon2id", a)
				}
				return nil
			}},
		{flag: "bcrypt-cost", group: GroupPasswords, arg: "n", key: "auth.bcryptCost", def: "10", usage: "bcrypt cost, 4 to 31",
			parse: intInto(func(c *Config) *int { return &c.Auth.BcryptCost }),
			check: func(c Config) error { return checkRange(int64(c.Auth.BcryptCost), 4, 31) }},
		{flag: "refresh-reuse-grace", group: GroupServer, arg: "duration", key: "auth.refreshReuseGrace", def: "10s",
			usage: "window after its first use in which a refresh token presented again gets the family's live refresh token instead of revoking the family (0: off)",
			parse: func(c *Config, v string) (err error) {
				c.Auth.RefreshReuseGrace, err = parseDurationOrZero(v)
				return err
			},
			check: func(c Config) error {
				if c.Auth.RefreshReuseGrace < 0 {
					return fmt.Errorf("%s must not be negative", c.Auth.RefreshReuseGrace)
				}
				return nil
			}},
		{flag: "session-max", group: GroupServer, arg: "duration", key: "auth.sessionMax", def: "90d",
			usage: "longest life of a session (refresh family) from its login, however often it refreshes",
			parse: durationInto(func(c *Config) *time.Duration { return &c.Auth.SessionMax }),
			check: func(c Config) error { return checkPositive(c.Auth.SessionMax) }},
		{flag: "max-sessions-per-user", group: GroupServer, arg: "n", key: "auth.maxSessionsPerUser", def: "100",
			usage: "live sessions (refresh families) of one user, counted in the database (all replicas together); a login beyond it ends the least recently used",
			parse: intInto(func(c *Config) *int { return &c.Auth.MaxSessionsPerUser }),
			check: func(c Config) error { return checkRange(int64(c.Auth.MaxSessionsPerUser), 1, 100_000) }},
		{flag: "key-encryption-secret-file", group: GroupKeys, arg: "file", key: "auth.keyEncryptionSecretFile",
			usage: "file holding a secret of at least 32 bytes that encrypts the stored signing keys (default none: stored unencrypted)",
			parse: readKeyEncryptionSecretFile,
			check: func(c Config) error {
				if s := c.Auth.KeyEncryptionSecret; s.IsSet() && s.Len() < minSecretBytes {
					return fmt.Errorf("the secret must be at least %d bytes", minSecretBytes)
				}
				return nil
			}},
		{flag: "key-publish-ahead", group: GroupKeys, arg: "duration", key: "auth.keyPublishAhead", def: "2m",
			usage: "how long keys rotate publishes a new key in the JWKS before it signs: 0 (at once, as keys rotate --now) or from the JWKS max-age (1m) to 1d",
			parse: func(c *Config, v string) (err error) {
				c.Auth.KeyPublishAhead, err = parseDurationOrZero(v)
				return err
			},
			check: func(c Config) error {
				switch d := c.Auth.KeyPublishAhead; {
				case d < 0 || d > 24*time.Hour:
					return fmt.Errorf("%s must be between 0 and 1d", d)
				case d > 0 && d < domain.KeySetMaxAge:
					return fmt.Errorf("%s is below the JWKS max-age of %s: a client caching the key set could meet a token of the new key "+
						"before it knows the key; use at least %s, or 0 to sign at once", d, durationText(domain.KeySetMaxAge), durationText(domain.KeySetMaxAge))
				}
				return nil
			}},
		{flag: "throttle-username-limit", group: GroupServer, arg: "n", key: "auth.throttle.usernameLimit", def: "10",
			usage: "failed logins of one username within the window before 429 (0: no limit)",
			parse: intInto(func(c *Config) *int { return &c.Auth.Throttle.UsernameLimit }),
			check: func(c Config) error { return checkRange(int64(c.Auth.Throttle.UsernameLimit), 0, 1_000_000) }},
		{flag: "throttle-address-limit", group: GroupServer, arg: "n", key: "auth.throttle.addressLimit", def: "100",
			usage: "failed logins from one client address within the window before 429 (0: no limit)",
			parse: intInto(func(c *Config) *int { return &c.Auth.Throttle.AddressLimit }),
			check: func(c Config) error { return checkRange(int64(c.Auth.Throttle.AddressLimit), 0, 1_000_000) }},
		{flag: "throttle-window", group: GroupServer, arg: "duration", key: "auth.throttle.window", def: "15m", usage: "window of the failed-login limits",
			parse: durationInto(func(c *Config) *time.Duration { return &c.Auth.Throttle.Window }),
			check: func(c Config) error { return checkPositive(c.Auth.Throttle.Window) }},
		{flag: "body-bytes", group: GroupServer, arg: "size", key: "limits.bodyBytes", def: "1MiB", usage: "largest request body (413 beyond)",
			parse: sizeInto(func(c *Config) *int64 { return &c.Limits.BodyBytes }),
			check: func(c Config) error { return checkRange(c.Limits.BodyBytes, 1<<10, maxSize) }},
		{flag: "max-header-bytes", group: GroupServer, arg: "size", key: "limits.headerBytes", def: "64KiB",
			usage: "largest request header (431 beyond)",
			parse: sizeInto(func(c *Config) *int64 { return &c.Limits.HeaderBytes }),
			check: func(c Config) error { return checkRange(c.Limits.HeaderBytes, 4<<10, 16<<20) }},
		{flag: "data-bytes", group: GroupData, arg: "size", key: "limits.dataBytes", def: "256KiB", usage: "largest entry data, as JSON text, of a write and of an imported entry",
			parse: sizeInto(func(c *Config) *int64 { return &c.Limits.DataBytes }),
			check: func(c Config) error { return checkRange(c.Limits.DataBytes, 1, maxSize) }},
		{flag: "list-max", group: GroupServer, arg: "n", key: "limits.listMax", def: "1000", usage: "largest limit= of a list; also the size of a bare list (no page=, offset= or limit=)",
			parse: intInto(func(c *Config) *int { return &c.Limits.ListMax }),
			check: func(c Config) error { return checkRange(int64(c.Limits.ListMax), 1, 100_000) }},
		{flag: "list-default", group: GroupServer, arg: "n", key: "limits.listDefault", def: "100", usage: "page size of a paged list (page= or offset=) without limit=",
			parse: intInto(func(c *Config) *int { return &c.Limits.ListDefault }),
			check: func(c Config) error { return checkRange(int64(c.Limits.ListDefault), 1, 100_000) }},
		{flag: "log-format", group: GroupStorage, arg: "format", key: "log.format", def: "text", usage: "log format: text or json",
			parse: func(c *Config, v string) error { c.Log.Format = LogFormat(strings.ToLower(v)); return nil },
			check: func(c Config) error {
				if f := c.Log.Format; f != LogText && f != LogJSON {
					return fmt.Errorf("%q must be text or json", f)
				}
				return nil
			}},
		{flag: "log-level", group: GroupStorage, arg: "level", key: "log.level", def: "info", usage: "log level: debug, info, warn or error",
			parse: parseLogLevel,
			check: func(c Config) error {
				switch c.Log.Level {
				case slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError:
					return nil
				}
				return fmt.Errorf("%s must be DEBUG, INFO, WARN or ERROR", c.Log.Level)
			}},
		{flag: "sweep-interval", group: GroupServer, arg: "duration", key: "sweep.interval", def: "1m", usage: "pause between sweeps of expired entries",
			parse: durationInto(func(c *Config) *time.Duration { return &c.Sweep.Interval }),
			check: func(c Config) error { return checkPositive(c.Sweep.Interval) }},
		{flag: "audit-retention", group: GroupServer, arg: "duration", key: "auditRetention", def: "90d",
			usage: "how long security events of the audit trail are kept",
			parse: durationInto(func(c *Config) *time.Duration { return &c.AuditRetention }),
			check: func(c Config) error { return checkPositive(c.AuditRetention) }},
		{flag: "audit-fold-window", group: GroupServer, arg: "duration", key: "auditFoldWindow", def: "1m",
			usage: "window within which failed and throttled logins fold into one audit event with a count",
			parse: durationInto(func(c *Config) *time.Duration { return &c.AuditFoldWindow }),
			check: func(c Config) error {
				if c.AuditFoldWindow < time.Second || c.AuditFoldWindow > time.Hour {
					return fmt.Errorf("%s must be between 1s and 1h", c.AuditFoldWindow)
				}
				return nil
			}},
		{flag: "sweep-batch", group: GroupServer, arg: "n", key: "sweep.batch", def: "1000", usage: "expired entries removed per sweep statement",
			parse: intInto(func(c *Config) *int { return &c.Sweep.Batch }),
			check: func(c Config) error { return checkRange(int64(c.Sweep.Batch), 1, 100_000) }},
		{flag: "events-retention", group: GroupServer, arg: "duration", key: "events.retention", def: "1h",
			usage: "how long the change feed keeps changes for subscribers resuming with Last-Event-ID",
			parse: durationInto(func(c *Config) *time.Duration { return &c.Events.Retention }),
			check: func(c Config) error { return checkPositive(c.Events.Retention) }},
		{flag: "events-heartbeat", group: GroupServer, arg: "duration", key: "events.heartbeat", def: "15s",
			usage: "interval of the keep-alive comment on change-feed streams",
			parse: durationInto(func(c *Config) *time.Duration { return &c.Events.Heartbeat }),
			check: func(c Config) error { return checkPositive(c.Events.Heartbeat) }},
		{flag: "events-retry", group: GroupServer, arg: "duration", key: "events.retry", def: "2s",
			usage: "reconnection delay announced to change-feed clients (retry:, whole milliseconds)",
			parse: durationInto(func(c *Config) *time.Duration { return &c.Events.Retry }),
			check: func(c Config) error { return checkRetry(c.Events.Retry) }},
		{flag: "max-lists-per-user", group: GroupServer, arg: "n", key: "caps.listsPerUser", def: "4",
			usage: "concurrent lists of one caller before 429 (0: no limit)",
			parse: intInto(func(c *Config) *int { return &c.Caps.ListsPerUser }),
			check: func(c Config) error { return checkRange(int64(c.Caps.ListsPerUser), 0, 1_000_000) }},
		{flag: "max-streams-per-user", group: GroupServer, arg: "n", key: "caps.streamsPerUser", def: "16",
			usage: "open change-feed streams of one caller before 429 (0: no limit)",
			parse: intInto(func(c *Config) *int { return &c.Caps.StreamsPerUser }),
			check: func(c Config) error { return checkRange(int64(c.Caps.StreamsPerUser), 0, 1_000_000) }},
		{flag: "max-conns-per-address", group: GroupServer, arg: "n", key: "caps.connsPerAddress", def: "256",
			usage: "open connections of one client address before 429 (0: no limit)",
			parse: intInto(func(c *Config) *int { return &c.Caps.ConnsPerAddress }),
			check: func(c Config) error { return checkRange(int64(c.Caps.ConnsPerAddress), 0, 1_000_000) }},
	}
}

// durationInto returns a parse function storing a positive duration.
func durationInto(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) (err error) {
		*field(c), err = parseDuration(v)
		return err
	}
}

// intInto returns a parse function storing a whole number.
func intInto(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) (err error) {
		*field(c), err = parseInt(v)
		return err
	}
}

// sizeInto returns a parse function storing a byte size.
func sizeInto(field func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) (err error) {
		*field(c), err = parseSize(v)
		return err
	}
}

func checkPositive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive", d)
	}
	return nil
}

// checkBudget bounds a setting of the database time budget to [0, most].
func checkBudget(d, most time.Duration) error {
	if d < 0 || d > most {
		return fmt.Errorf("%s must be between 0 and %s", d, most)
	}
	return nil
}

// checkRetry bounds the reconnection delay sent as `retry: <ms>`: at
// least a millisecond, at most an hour (README, "Change feed").
func checkRetry(d time.Duration) error {
	if d < time.Millisecond || d > time.Hour {
		return fmt.Errorf("%s must be between 1ms and 1h", d)
	}
	return nil
}

func checkNonEmpty(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// checkSecret never quotes the secret, only its length.
func checkSecret(c Config) error {
	if s := c.Auth.HS256Secret; s.IsSet() && s.Len() < minSecretBytes {
		return fmt.Errorf("must be at least %d bytes", minSecretBytes)
	}
	return nil
}

// readSecretFile reads the HS256 secret from a file. Trailing line breaks
// are dropped, since editors and `echo` add one.
func readSecretFile(c *Config, path string) error {
	b, err := readFileUpTo(path, maxSecretFileBytes)
	if err != nil {
		return err
	}
	c.Auth.HS256Secret = NewSecret(strings.TrimRight(string(b), "\r\n"))
	c.Auth.HS256SecretFile = path
	if !c.Auth.HS256Secret.IsSet() {
		return fmt.Errorf("%s: is empty", path)
	}
	return nil
}

// readKeyEncryptionSecretFile reads the key encryption secret; the
// whitespace around it is ignored.
func readKeyEncryptionSecretFile(c *Config, path string) error {
	b, err := readFileUpTo(path, maxSecretFileBytes)
	if err != nil {
		return err
	}
	c.Auth.KeyEncryptionSecret = NewSecret(strings.TrimSpace(string(b)))
	c.Auth.KeyEncryptionSecretFile = path
	if !c.Auth.KeyEncryptionSecret.IsSet() {
		return fmt.Errorf("%s: is empty", path)
	}
	return nil
}

// minMetricsTokenBytes is the shortest metrics token accepted: it stands
// for a password, so it must not be guessable.
const minMetricsTokenBytes = 16

// readMetricsTokenFile reads the metrics token; surrounding whitespace is
// ignored. Its text is never quoted in an error.
func readMetricsTokenFile(c *Config, path string) error {
	if path == "" {
		c.MetricsToken, c.MetricsTokenFile = Secret{}, ""
		return nil
	}
	b, err := readFileUpTo(path, maxSecretFileBytes)
	if err != nil {
		return err
	}
	c.MetricsToken = NewSecret(strings.TrimSpace(string(b)))
	c.MetricsTokenFile = path
	if c.MetricsToken.Len() < minMetricsTokenBytes {
		return fmt.Errorf("%s: the token must be at least %d bytes", path, minMetricsTokenBytes)
	}
	// A bearer token is an RFC 6750 b64token: what base64 or hex gives.
	for _, r := range c.MetricsToken.Reveal() {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r)) {
			return fmt.Errorf("%s: the token may hold only letters, digits and -._~+/=", path)
		}
	}
	return nil
}

// readFileUpTo reads the file at path, refusing one larger than limit
// bytes without reading it whole.
func readFileUpTo(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return b, nil
}

// parseRefreshFrom parses "IN:NAME".
func parseRefreshFrom(c *Config, v string) error {
	in, name, ok := strings.Cut(v, ":")
	if !ok {
		return fmt.Errorf("%q must be body:FIELD, header:NAME, cookie:NAME or query:NAME", v)
	}
	c.Auth.RefreshFrom = TokenSource{In: TokenLocation(strings.ToLower(in)), Name: name}
	return nil
}

// checkTokenSource checks a TokenSource's location and name. Header
// names are HTTP tokens; the other names must be non-empty and printable.
func checkTokenSource(s TokenSource) error {
	switch s.In {
	case InBody, InHeader, InCookie, InQuery:
	default:
		return fmt.Errorf("%q must be body:FIELD, header:NAME, cookie:NAME or query:NAME", s.String())
	}
	if s.Name == "" || strings.ContainsFunc(s.Name, func(r rune) bool {
		return r <= ' ' || r == 0x7f || s.In == InHeader && strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) {
		return fmt.Errorf("%q must name a field, header, cookie or query parameter after the colon", s.String())
	}
	return nil
}

// parseLogLevel accepts debug, info, warn (or warning) and error, in any
// case.
func parseLogLevel(c *Config, v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "debug":
		c.Log.Level = slog.LevelDebug
	case "info":
		c.Log.Level = slog.LevelInfo
	case "warn", "warning":
		c.Log.Level = slog.LevelWarn
	case "error":
		c.Log.Level = slog.LevelError
	default:
		return fmt.Errorf("%q must be debug, info, warn or error", v)
	}
	return nil
}

// parseTrustedProxies reads a comma-separated list; empty items are
// skipped, so "" is none.
func parseTrustedProxies(c *Config, v string) error {
	c.TrustedProxies = nil
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			c.TrustedProxies = append(c.TrustedProxies, item)
		}
	}
	return nil
}

// checkTrustedProxies accepts IP addresses and CIDRs.
func checkTrustedProxies(list []string) error {
	var bad []string
	for _, item := range list {
		if _, err := netip.ParsePrefix(item); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(item); err != nil {
			bad = append(bad, strconv.Quote(item))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: must be IP addresses or CIDRs such as 10.0.0.0/8", strings.Join(bad, ", "))
	}
	return nil
}
