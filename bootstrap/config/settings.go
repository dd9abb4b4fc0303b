package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/domain"
)

// setting is one scalar setting: its names, how its text becomes a value
// of the Config the table was made for (parse: syntax only) and how that
// value is checked (check: on the typed value, so Validate can run it too).
type setting struct {
	flag, key, def, usage string
	arg                   string // the value's name in -help
	noFlag, isBool        bool
	isList                bool     // YAML may give a list; flags and env a comma-separated text
	group                 cli.Uses // the commands that read it; 0 (none named): every command
	parse                 func(v string) error
	check                 func() error
}

func (s setting) env() string { return envName(s.flag) }

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

// settings returns the table of scalar settings, parsing into and checking
// c. Its defaults are Default's.
func settings(c *Config) []setting {
	q := domain.DefaultQuota()
	return []setting{
		{flag: "addr", group: cli.UsesServer, arg: "host:port", key: "addr", def: "127.0.0.1:8080", usage: "HTTP listen address",
			parse: into(&c.Addr, asIs), check: func() error { return checkAddr(c.Addr) }},
		{flag: "database", group: cli.UsesStorage, arg: "url", key: "database", def: "sqlite:cachegate.db",
			usage: "database URL: sqlite:PATH, sqlite::memory: or postgres://user:pass@host:port/db",
			parse: into(&c.Database, asIs), check: func() error { return checkDatabase(c.Database) }},
		{flag: "database-timeout", group: cli.UsesStorage, arg: "duration", key: "databaseTimeout", def: "5s",
			usage: "longest wait for the database per call (connection, statement, rows); past it 503 DATABASE_UNAVAILABLE",
			parse: into(&c.DatabaseTimeout, parseDuration), check: durationIn(&c.DatabaseTimeout, 1, 10*time.Minute, "be positive and at most 10m")},
		{flag: "query-timeout", group: cli.UsesServer, arg: "duration", key: "queryTimeout", def: "2s",
			usage: "longest time the database may spend on one statement of a list (the count, each page); past it 422 QUERY_TOO_EXPENSIVE",
			parse: into(&c.QueryTimeout, parseDuration), check: durationIn(&c.QueryTimeout, 1, 10*time.Minute, "be positive and at most 10m")},
		{flag: "database-user-statements", group: cli.UsesServer, arg: "n", key: "databaseUserStatements", def: "0",
			usage: "database calls one user (or anonymous client address) may run at once; beyond, 429 TOO_MANY_REQUESTS; 0: half the connection pool",
			parse: into(&c.DatabaseUserStatements, parseInt), check: between(&c.DatabaseUserStatements, 0, 10_000)},
		{flag: "database-user-time", group: cli.UsesServer, arg: "duration", key: "databaseUserTime", def: "500ms",
			usage: "database time one user (or anonymous client address) may use per second on this replica; once its budget is spent, 429 TOO_MANY_REQUESTS until it refills; 0: no budget",
			parse: into(&c.DatabaseUserTime, parseDurationOrZero), check: durationIn(&c.DatabaseUserTime, 0, time.Second, "be between 0 and 1s")},
		{flag: "database-user-burst", group: cli.UsesServer, arg: "duration", key: "databaseUserBurst", def: "5s",
			usage: "database time one user (or anonymous client address) may use at once before database-user-time paces it",
			parse: into(&c.DatabaseUserBurst, parseDuration), check: durationIn(&c.DatabaseUserBurst, 0, 10*time.Minute, "be between 0 and 10m0s")},
		{flag: "metrics-addr", group: cli.UsesServer, arg: "host:port", key: "metricsAddr",
			usage: "separate listen address for /metrics, served there without authentication (default none: /metrics on addr, for the metrics token or an administrator)",
			parse: into(&c.MetricsAddr, asIs),
			check: func() error {
				if c.MetricsAddr == "" {
					return nil
				}
				return checkAddr(c.MetricsAddr)
			}},
		{flag: "metrics-token-file", group: cli.UsesServer, arg: "file", key: "metricsTokenFile",
			usage: "file holding the token (at least 16 bytes) scrapers send as Authorization: Bearer to /metrics on addr (default none: only an administrator's access token reads /metrics on addr)",
			parse: c.readMetricsTokenFile},
		{flag: "error-format", group: cli.UsesServer, arg: "format", key: "errorFormat", def: "cachegate",
			usage: "shape of 400 validation errors: cachegate (message a string, details) or rockets (message an array of {property, constraints})",
			parse: into(&c.ErrorFormat, func(v string) (string, error) { return strings.ToLower(strings.TrimSpace(v)), nil }),
			check: oneOf(&c.ErrorFormat, ErrorFormatCachegate, ErrorFormatRockets)},
		{flag: "trusted-proxies", group: cli.UsesServer, arg: "cidrs", key: "trustedProxies", isList: true,
			usage: "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For is believed (default none)",
			parse: into(&c.TrustedProxies, parseTrustedProxies), check: func() error { return checkTrustedProxies(c.TrustedProxies) }},
		{flag: "cors-origins", group: cli.UsesServer, arg: "origins", key: "cors.origins", isList: true,
			usage: "comma-separated origins (scheme://host[:port]) whose browser apps may call the API, or * for any (default none: no CORS headers)",
			parse: into(&c.CORS.Origins, parseCORSOrigins), check: func() error { return checkCORSOrigins(c.CORS) }},
		{flag: "cors-credentials", group: cli.UsesServer, key: "cors.credentials", def: "false", isBool: true,
			usage: "let the CORS origins send credentials (cookies); not with --cors-origins *",
			parse: into(&c.CORS.Credentials, parseBool),
			check: func() error {
				if c.CORS.Credentials && c.CORS.AnyOrigin() {
					return errors.New("cannot be used with the origin *: browsers refuse credentials with a wildcard origin; list the origins")
				}
				return nil
			}},
		{flag: "console", group: cli.UsesServer, key: "console", def: "true", isBool: true,
			usage: "serve the web console at /console/", parse: into(&c.Console, parseBool)},
		{flag: "setup-from-anywhere", group: cli.UsesServer, key: "setupFromAnywhere", def: "false", isBool: true,
			usage: "accept the first admin's one-time set-up link from any address, not only from this machine (loopback)",
			parse: into(&c.SetupFromAnywhere, parseBool)},
		{flag: "access-token-ttl", group: cli.UsesKeys, arg: "duration", key: "accessTokenTTL", def: "15m", usage: "access token lifetime",
			parse: into(&c.AccessTokenTTL, parseDuration), check: positive(&c.AccessTokenTTL)},
		{flag: "refresh-token-ttl", group: cli.UsesKeys, arg: "duration", key: "refreshTokenTTL", def: "30d", usage: "refresh token lifetime",
			parse: into(&c.RefreshTokenTTL, parseDuration), check: positive(&c.RefreshTokenTTL)},
		{flag: "shutdown-timeout", group: cli.UsesServer, arg: "duration", key: "shutdownTimeout", def: "15s",
			usage: "how long in-flight requests may finish on shutdown",
			parse: into(&c.ShutdownTimeout, parseDuration), check: positive(&c.ShutdownTimeout)},
		{flag: "cache-expires-in", group: cli.UsesServer, arg: "duration", key: "cache.settings.expiresIn", def: "none",
			usage: "expiration of entries created with expiresIn null (none: never)",
			parse: into(&c.Cache.Settings.ExpiresIn, parseExpiresIn),
			check: func() error {
				if p := c.Cache.Settings.ExpiresIn; p != nil {
					return checkPositive(*p)
				}
				return nil
			}},
		{flag: "quota-max-entries", group: cli.UsesServer, arg: "n", key: "cache.settings.maxEntries", def: strconv.FormatInt(q.MaxEntries, 10),
			usage: "most entries one assignee may keep in an assignment, deleted and expired ones until removed, counted in the database (0: no limit); an assignment's maxEntries replaces it",
			parse: into(&c.Cache.Settings.MaxEntries, parseInt), check: between(&c.Cache.Settings.MaxEntries, 0, maxQuotaEntries)},
		{flag: "quota-max-bytes", group: cli.UsesServer, arg: "size", key: "cache.settings.maxBytes", def: fmt.Sprintf("%dMiB", q.MaxBytes>>20),
			usage: "most bytes one assignee's writes may keep in an assignment: data, and the changes and idempotency records kept of it, counted in the database (0: no limit); an assignment's maxBytes replaces it",
			parse: into(&c.Cache.Settings.MaxBytes, parseQuotaSize), check: between(&c.Cache.Settings.MaxBytes, 0, maxQuotaBytes)},
		{flag: "enable-guards", group: cli.UsesServer, key: "auth.enableGuards", def: "true", isBool: true,
			usage: "guard every non-public route with the access-token guard", parse: into(&c.Auth.EnableGuards, parseBool)},
		{flag: "issuer", group: cli.UsesKeys, arg: "string", key: "auth.issuer", def: "cachegate", usage: "iss claim of issued tokens",
			parse: into(&c.Auth.Issuer, asIs), check: nonEmpty(&c.Auth.Issuer)},
		{flag: "audience", group: cli.UsesKeys, arg: "string", key: "auth.audience", def: "cachegate", usage: "aud claim of issued tokens",
			parse: into(&c.Auth.Audience, asIs), check: nonEmpty(&c.Auth.Audience)},
		{flag: "client-id", group: cli.UsesKeys, arg: "string", key: "auth.clientId", def: "cachegate", usage: "client_id claim of access tokens (RFC 9068)",
			parse: into(&c.Auth.ClientID, asIs), check: nonEmpty(&c.Auth.ClientID)},
		{flag: secretFlag, group: cli.UsesKeys, key: "auth.hs256Secret", noFlag: true,
			usage: "HS256 signing secret, at least 32 bytes (environment or YAML only)",
			parse: into(&c.Auth.HS256Secret, func(v string) (Secret, error) { return NewSecret(v), nil }),
			check: minSecret(&c.Auth.HS256Secret, "must be at least %d bytes")},
		{flag: secretFileFlag, group: cli.UsesKeys, arg: "file", key: "auth.hs256SecretFile",
			usage: "file holding the HS256 signing secret (default none: the stored EdDSA keys sign)",
			// Trailing line breaks are dropped, since editors and `echo` add one.
			parse: func(v string) error {
				return readSecretFile(v, func(s string) string { return strings.TrimRight(s, "\r\n") }, &c.Auth.HS256Secret, &c.Auth.HS256SecretFile)
			},
			check: minSecret(&c.Auth.HS256Secret, "must be at least %d bytes")},
		{flag: "username-field", group: cli.UsesServer, arg: "name", key: "auth.usernameField", def: "username", usage: "login body field of the username",
			parse: into(&c.Auth.UsernameField, asIs), check: nonEmpty(&c.Auth.UsernameField)},
		{flag: "password-field", group: cli.UsesServer, arg: "name", key: "auth.passwordField", def: "password", usage: "login body field of the password",
			parse: into(&c.Auth.PasswordField, asIs), check: nonEmpty(&c.Auth.PasswordField)},
		{flag: "refresh-from", group: cli.UsesServer, arg: "in:name", key: "auth.refreshFrom", def: "body:refreshToken",
			usage: "where the refresh token is read: body:FIELD, header:NAME, cookie:NAME or query:NAME",
			parse: into(&c.Auth.RefreshFrom, parseTokenSource), check: func() error { return checkTokenSource(c.Auth.RefreshFrom) }},
		{flag: "password-algorithm", group: cli.UsesPasswords, arg: "name", key: "auth.passwordAlgorithm", def: "bcrypt",
			usage: "hash of new passwords: bcrypt or argon2id",
			parse: into(&c.Auth.PasswordAlgorithm, func(v string) (PasswordAlgorithm, error) { return PasswordAlgorithm(v), nil }),
			check: oneOf(&c.Auth.PasswordAlgorithm, Bcrypt, Argon2id)},
		{flag: "bcrypt-cost", group: cli.UsesPasswords, arg: "n", key: "auth.bcryptCost", def: "10", usage: "bcrypt cost, 4 to 31",
			parse: into(&c.Auth.BcryptCost, parseInt), check: between(&c.Auth.BcryptCost, 4, 31)},
		{flag: "refresh-reuse-grace", group: cli.UsesServer, arg: "duration", key: "auth.refreshReuseGrace", def: "10s",
			usage: "window after its first use in which a refresh token presented again gets the family's live refresh token instead of revoking the family (0: off)",
			parse: into(&c.Auth.RefreshReuseGrace, parseDurationOrZero), check: durationIn(&c.Auth.RefreshReuseGrace, 0, math.MaxInt64, "not be negative")},
		{flag: "session-max", group: cli.UsesServer, arg: "duration", key: "auth.sessionMax", def: "90d",
			usage: "longest life of a session (refresh family) from its login, however often it refreshes",
			parse: into(&c.Auth.SessionMax, parseDuration), check: positive(&c.Auth.SessionMax)},
		{flag: "max-sessions-per-user", group: cli.UsesServer, arg: "n", key: "auth.maxSessionsPerUser", def: "100",
			usage: "live sessions (refresh families) of one user, counted in the database (all replicas together); a login beyond it ends the least recently used",
			parse: into(&c.Auth.MaxSessionsPerUser, parseInt), check: between(&c.Auth.MaxSessionsPerUser, 1, 100_000)},
		{flag: "key-encryption-secret-file", group: cli.UsesKeys, arg: "file", key: "auth.keyEncryptionSecretFile",
			usage: "file holding a secret of at least 32 bytes that encrypts the stored signing keys (default none: stored unencrypted)",
			parse: func(v string) error {
				return readSecretFile(v, strings.TrimSpace, &c.Auth.KeyEncryptionSecret, &c.Auth.KeyEncryptionSecretFile)
			},
			check: minSecret(&c.Auth.KeyEncryptionSecret, "the secret must be at least %d bytes")},
		{flag: "key-publish-ahead", group: cli.UsesKeys, arg: "duration", key: "auth.keyPublishAhead", def: "2m",
			usage: "how long keys rotate publishes a new key in the JWKS before it signs: 0 (at once, as keys rotate --now) or from the JWKS max-age (1m) to 1d",
			parse: into(&c.Auth.KeyPublishAhead, parseDurationOrZero),
			check: func() error {
				switch d := c.Auth.KeyPublishAhead; {
				case d < 0 || d > 24*time.Hour:
					return fmt.Errorf("%s must be between 0 and 1d", d)
				case d > 0 && d < domain.KeySetMaxAge:
					return fmt.Errorf("%s is below the JWKS max-age of %s: a client caching the key set could meet a token of the new key "+
						"before it knows the key; use at least %s, or 0 to sign at once", d, durationText(domain.KeySetMaxAge), durationText(domain.KeySetMaxAge))
				}
				return nil
			}},
		{flag: "throttle-username-limit", group: cli.UsesServer, arg: "n", key: "auth.throttle.usernameLimit", def: "10",
			usage: "failed logins of one username within the window before 429 (0: no limit)",
			parse: into(&c.Auth.Throttle.UsernameLimit, parseInt), check: between(&c.Auth.Throttle.UsernameLimit, 0, 1_000_000)},
		{flag: "throttle-address-limit", group: cli.UsesServer, arg: "n", key: "auth.throttle.addressLimit", def: "100",
			usage: "failed logins from one client address within the window before 429 (0: no limit)",
			parse: into(&c.Auth.Throttle.AddressLimit, parseInt), check: between(&c.Auth.Throttle.AddressLimit, 0, 1_000_000)},
		{flag: "throttle-window", group: cli.UsesServer, arg: "duration", key: "auth.throttle.window", def: "15m", usage: "window of the failed-login limits",
			parse: into(&c.Auth.Throttle.Window, parseDuration), check: positive(&c.Auth.Throttle.Window)},
		{flag: "body-bytes", group: cli.UsesServer, arg: "size", key: "limits.bodyBytes", def: "1MiB", usage: "largest request body (413 beyond)",
			parse: into(&c.Limits.BodyBytes, parseSize), check: between(&c.Limits.BodyBytes, 1<<10, maxSize)},
		{flag: "max-header-bytes", group: cli.UsesServer, arg: "size", key: "limits.headerBytes", def: "64KiB",
			usage: "largest request header (431 beyond)",
			parse: into(&c.Limits.HeaderBytes, parseSize), check: between(&c.Limits.HeaderBytes, 4<<10, 16<<20)},
		{flag: "data-bytes", group: cli.UsesData, arg: "size", key: "limits.dataBytes", def: "256KiB", usage: "largest entry data, as JSON text, of a write and of an imported entry",
			parse: into(&c.Limits.DataBytes, parseSize), check: between(&c.Limits.DataBytes, 1, maxSize)},
		{flag: "list-max", group: cli.UsesServer, arg: "n", key: "limits.listMax", def: "1000", usage: "largest limit= of a list; also the size of a bare list (no page=, offset= or limit=)",
			parse: into(&c.Limits.ListMax, parseInt), check: between(&c.Limits.ListMax, 1, 100_000)},
		{flag: "list-default", group: cli.UsesServer, arg: "n", key: "limits.listDefault", def: "100", usage: "page size of a paged list (page= or offset=) without limit=",
			parse: into(&c.Limits.ListDefault, parseInt), check: between(&c.Limits.ListDefault, 1, 100_000)},
		{flag: "log-format", group: cli.UsesStorage, arg: "format", key: "log.format", def: "text", usage: "log format: text or json",
			parse: into(&c.Log.Format, func(v string) (LogFormat, error) { return LogFormat(strings.ToLower(v)), nil }),
			check: oneOf(&c.Log.Format, LogText, LogJSON)},
		{flag: "log-level", group: cli.UsesStorage, arg: "level", key: "log.level", def: "info", usage: "log level: debug, info, warn or error",
			parse: into(&c.Log.Level, parseLogLevel),
			check: func() error {
				switch c.Log.Level {
				case slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError:
					return nil
				}
				return fmt.Errorf("%s must be DEBUG, INFO, WARN or ERROR", c.Log.Level)
			}},
		{flag: "sweep-interval", group: cli.UsesServer, arg: "duration", key: "sweep.interval", def: "1m", usage: "pause between sweeps of expired entries",
			parse: into(&c.Sweep.Interval, parseDuration), check: positive(&c.Sweep.Interval)},
		{flag: "audit-retention", group: cli.UsesServer, arg: "duration", key: "auditRetention", def: "90d",
			usage: "how long security events of the audit trail are kept",
			parse: into(&c.AuditRetention, parseDuration), check: positive(&c.AuditRetention)},
		{flag: "audit-fold-window", group: cli.UsesServer, arg: "duration", key: "auditFoldWindow", def: "1m",
			usage: "window within which failed and throttled logins fold into one audit event with a count",
			parse: into(&c.AuditFoldWindow, parseDuration), check: durationIn(&c.AuditFoldWindow, time.Second, time.Hour, "be between 1s and 1h")},
		{flag: "sweep-batch", group: cli.UsesServer, arg: "n", key: "sweep.batch", def: "1000", usage: "expired entries removed per sweep statement",
			parse: into(&c.Sweep.Batch, parseInt), check: between(&c.Sweep.Batch, 1, 100_000)},
		{flag: "events-retention", group: cli.UsesServer, arg: "duration", key: "events.retention", def: "1h",
			usage: "how long the change feed keeps changes for subscribers resuming with Last-Event-ID",
			parse: into(&c.Events.Retention, parseDuration), check: positive(&c.Events.Retention)},
		{flag: "events-heartbeat", group: cli.UsesServer, arg: "duration", key: "events.heartbeat", def: "15s",
			usage: "interval of the keep-alive comment on change-feed streams",
			parse: into(&c.Events.Heartbeat, parseDuration), check: positive(&c.Events.Heartbeat)},
		{flag: "events-retry", group: cli.UsesServer, arg: "duration", key: "events.retry", def: "2s",
			usage: "reconnection delay announced to change-feed clients (retry:, whole milliseconds)",
			parse: into(&c.Events.Retry, parseDuration), check: durationIn(&c.Events.Retry, time.Millisecond, time.Hour, "be between 1ms and 1h")},
		{flag: "max-lists-per-user", group: cli.UsesServer, arg: "n", key: "caps.listsPerUser", def: "4",
			usage: "concurrent lists of one caller before 429 (0: no limit)",
			parse: into(&c.Caps.ListsPerUser, parseInt), check: between(&c.Caps.ListsPerUser, 0, 1_000_000)},
		{flag: "max-streams-per-user", group: cli.UsesServer, arg: "n", key: "caps.streamsPerUser", def: "16",
			usage: "open change-feed streams of one caller before 429 (0: no limit)",
			parse: into(&c.Caps.StreamsPerUser, parseInt), check: between(&c.Caps.StreamsPerUser, 0, 1_000_000)},
		{flag: "max-conns-per-address", group: cli.UsesServer, arg: "n", key: "caps.connsPerAddress", def: "256",
			usage: "open connections of one client address before 429 (0: no limit)",
			parse: into(&c.Caps.ConnsPerAddress, parseInt), check: between(&c.Caps.ConnsPerAddress, 0, 1_000_000)},
	}
}

// into returns a parse function storing what parse makes of the text in *p.
func into[T any](p *T, parse func(string) (T, error)) func(string) error {
	return func(v string) (err error) {
		*p, err = parse(v)
		return err
	}
}

func asIs(v string) (string, error) { return v, nil }

func between[T int | int64](p *T, lo, hi int64) func() error {
	return func() error { return checkRange(int64(*p), lo, hi) }
}

// durationIn returns a check of lo <= *p <= hi; must says the range in the
// error's words.
func durationIn(p *time.Duration, lo, hi time.Duration, must string) func() error {
	return func() error {
		if *p < lo || *p > hi {
			return fmt.Errorf("%s must %s", *p, must)
		}
		return nil
	}
}

func positive(p *time.Duration) func() error { return func() error { return checkPositive(*p) } }

func oneOf[T ~string](p *T, a, b T) func() error {
	return func() error {
		if *p != a && *p != b {
			return fmt.Errorf("%q must be %s or %s", *p, a, b)
		}
		return nil
	}
}

func checkPositive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive", d)
	}
	return nil
}

func nonEmpty(p *string) func() error {
	return func() error {
		if strings.TrimSpace(*p) == "" {
			return errors.New("must not be empty")
		}
		return nil
	}
}

// parseExpiresIn parses cache.settings.expiresIn: "none" (nil) or a
// duration.
func parseExpiresIn(v string) (*time.Duration, error) {
	if strings.EqualFold(strings.TrimSpace(v), "none") {
		return nil, nil
	}
	d, err := parseDuration(v)
	if err != nil {
		return nil, fmt.Errorf(`%q must be "none" or a duration such as 1h or 7d`, v)
	}
	return &d, nil
}

// minSecret returns a check that a set secret holds at least
// minSecretBytes; it never quotes the secret, only its length.
func minSecret(s *Secret, format string) func() error {
	return func() error {
		if s.IsSet() && s.Len() < minSecretBytes {
			return fmt.Errorf(format, minSecretBytes)
		}
		return nil
	}
}

// readSecretFile reads the secret in the file at path, trimmed, into s,
// and path into file. An empty secret is refused.
func readSecretFile(path string, trim func(string) string, s *Secret, file *string) error {
	b, err := readFileUpTo(path, maxSecretFileBytes)
	if err != nil {
		return err
	}
	*s, *file = NewSecret(trim(string(b))), path
	if !s.IsSet() {
		return fmt.Errorf("%s: is empty", path)
	}
	return nil
}

// minMetricsTokenBytes is the shortest metrics token accepted: it stands
// for a password, so it must not be guessable.
const minMetricsTokenBytes = 16

// readMetricsTokenFile reads the metrics token; surrounding whitespace is
// ignored. Its text is never quoted in an error.
func (c *Config) readMetricsTokenFile(path string) error {
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

// parseTokenSource parses "IN:NAME".
func parseTokenSource(v string) (TokenSource, error) {
	in, name, ok := strings.Cut(v, ":")
	if !ok {
		return TokenSource{}, fmt.Errorf("%q must be body:FIELD, header:NAME, cookie:NAME or query:NAME", v)
	}
	return TokenSource{In: TokenLocation(strings.ToLower(in)), Name: name}, nil
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
func parseLogLevel(v string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q must be debug, info, warn or error", v)
}

// parseTrustedProxies reads a comma-separated list; empty items are
// skipped, so "" is none.
func parseTrustedProxies(v string) (list []string, _ error) {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			list = append(list, item)
		}
	}
	return list, nil
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
