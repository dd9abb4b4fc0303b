package config

import (
	"log/slog"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// Config is the whole configuration of the binary. Load returns it fully
// defaulted and validated; Default returns the defaults alone.
type Config struct {
	// Addr is the HTTP listen address (host:port).
	Addr string
	// Database is the database URL as bunstore.Open takes it. It may hold
	// a password: log RedactedDatabase instead.
	Database string
	// DatabaseTimeout bounds each call to the database and each connection
	// attempt (503 DATABASE_UNAVAILABLE past it).
	DatabaseTimeout time.Duration
	// QueryTimeout bounds each statement of a list (422
	// QUERY_TOO_EXPENSIVE past it; bunstore.WithQueryTimeout).
	QueryTimeout time.Duration
	// DatabaseUserStatements bounds the database calls one caller runs at
	// once; 0 is half the connection pool (bunstore.WithCallerBound).
	DatabaseUserStatements int
	// DatabaseUserTime and DatabaseUserBurst are one caller's budget of
	// database time per second and at once on this replica (429 once it
	// is spent; bunstore.Budget). A zero rate is no budget.
	DatabaseUserTime  time.Duration
	DatabaseUserBurst time.Duration
	// MetricsAddr is a separate listen address for GET /metrics; empty
	// serves /metrics, guarded, on Addr.
	MetricsAddr string
	// MetricsToken, when set, lets a scraper bearing it read GET /metrics
	// on Addr; MetricsTokenFile is where it was read.
	MetricsToken     Secret
	MetricsTokenFile string
	// ErrorFormat is the shape of 400 validation errors:
	// ErrorFormatCachegate or ErrorFormatRockets.
	ErrorFormat string
	// AccessTokenTTL is the lifetime of access tokens.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is the lifetime of refresh tokens.
	RefreshTokenTTL time.Duration
	// ShutdownTimeout bounds how long in-flight requests may finish after
	// SIGTERM/SIGINT.
	ShutdownTimeout time.Duration
	// AuditRetention is how long audit events are kept; the sweeper
	// removes older ones.
	AuditRetention time.Duration
	// AuditFoldWindow is the window within which failed and throttled
	// logins fold into one audit event (domain.AuditFold).
	AuditFoldWindow time.Duration
	// TrustedProxies are the addresses and CIDRs of proxies whose
	// X-Forwarded-For is believed; none by default.
	TrustedProxies []string
	// ConfigFile is the YAML file that was loaded; empty when none.
	ConfigFile string
	// Console serves the web console at /console/; on by default.
	Console bool
	// SetupFromAnywhere accepts the first admin's one-time set-up link
	// from any address (docs/admin.md, "The first admin").
	SetupFromAnywhere bool

	// CORS lets browser apps on other origins call the API.
	CORS CORS

	Cache  Cache
	Auth   Auth
	Limits Limits
	Log    Log
	Sweep  Sweep
	Events Events
	// Caps bound what one caller holds open at once.
	Caps Caps
}

// Cache is the cache part of the YAML file (README, "Configuration").
type Cache struct {
	// Entities maps an entity key to its storage; each entity is its own
	// table.
	Entities map[string]Entity
	Settings CacheSettings
}

// Entity is one cache store.
type Entity struct {
	// Table is the entity's table; it defaults to the snake_case form of
	// the entity key (userCache → user_cache) and matches
	// ^[a-z_][a-z0-9_]{0,62}$.
	Table string
}

// CacheSettings holds the assignments and the default expiration.
type CacheSettings struct {
	// ExpiresIn is the expiration of entries created with expiresIn null;
	// nil means such entries never expire.
	ExpiresIn *time.Duration
	// Assignments maps an assignment name, the route segment of
	// /cache/<name>, to its entity and access policy. Names match
	// ^[A-Za-z0-9_-]{1,64}$.
	Assignments map[string]Assignment
	// MaxEntries and MaxBytes are the default quota of each assignee in
	// each assignment (README, "Quotas"): entries, and bytes of their
	// data. 0 means no limit. An assignment may set its own.
	MaxEntries int64
	MaxBytes   int64
}

// Assignment routes /cache/<name> to an entity under an access policy.
type Assignment struct {
	// EntityKey is a key of Cache.Entities.
	EntityKey string
	// Policy defaults to domain.PolicyOwner.
	Policy domain.Policy
	// MaxEntries and MaxBytes, when set, replace the defaults of
	// CacheSettings for this assignment (0: no limit).
	MaxEntries *int64
	MaxBytes   *int64
}

// Quota returns the quota of assignment name: its own limits where it
// sets them, the settings' defaults otherwise.
func (s CacheSettings) Quota(name string) domain.Quota {
	q := domain.Quota{MaxEntries: s.MaxEntries, MaxBytes: s.MaxBytes}
	a := s.Assignments[name]
	if a.MaxEntries != nil {
		q.MaxEntries = *a.MaxEntries
	}
	if a.MaxBytes != nil {
		q.MaxBytes = *a.MaxBytes
	}
	return q
}

// PasswordAlgorithm names the hash new passwords get.
type PasswordAlgorithm string

// The password algorithms.
const (
	Bcrypt   PasswordAlgorithm = "bcrypt"
	Argon2id PasswordAlgorithm = "argon2id"
)

// TokenLocation is where in a request a token is read from.
type TokenLocation string

// The token locations.
const (
	InBody   TokenLocation = "body"
	InHeader TokenLocation = "header"
	InCookie TokenLocation = "cookie"
	InQuery  TokenLocation = "query"
)

// TokenSource names where the refresh token is read from: a JSON body
// field, a header, a cookie or a query parameter. It is written "IN:NAME",
// for example "body:refreshToken" (the default) or "header:X-Refresh-Token".
type TokenSource struct {
	In   TokenLocation
	Name string
}

// String returns the "IN:NAME" form.
func (s TokenSource) String() string { return string(s.In) + ":" + s.Name }

// Auth configures login, tokens and guards.
type Auth struct {
	// EnableGuards guards every non-public route with the access-token
	// guard (README, "Configuration": auth.enableGuards).
	EnableGuards bool
	// Issuer and Audience are the iss and aud claims issued and required.
	Issuer   string
	Audience string
	// ClientID is the client_id claim of access tokens (RFC 9068).
	ClientID string
	// KeyPublishAhead is how long `keys rotate` publishes a new signing
	// key before it signs (0: at once).
	KeyPublishAhead time.Duration
	// HS256Secret, when set, is an HMAC key of at least 32 bytes kept for
	// compatibility; EdDSA keys stored in the database are used otherwise.
	HS256Secret Secret
	// HS256SecretFile is the file HS256Secret was read from (trailing
	// newlines removed); empty when the secret came from elsewhere.
	HS256SecretFile string
	// UsernameField and PasswordField name the login body's fields.
	UsernameField string
	PasswordField string
	// RefreshFrom is where POST /auth/refresh reads the refresh token.
	RefreshFrom TokenSource
	// PasswordAlgorithm is the hash of new and upgraded passwords.
	PasswordAlgorithm PasswordAlgorithm
	// BcryptCost is bcrypt's cost (4..31).
	BcryptCost int
	// RefreshReuseGrace lets a just-used refresh token be presented again
	// within this window of its first use without revoking its family:
	// the answer holds the family's live refresh token again (0: off).
	RefreshReuseGrace time.Duration
	// SessionMax bounds a refresh family's life from its login, however
	// often it refreshes.
	SessionMax time.Duration
	// MaxSessionsPerUser bounds a user's live sessions, counted in the
	// database: a login beyond it ends the least recently used.
	MaxSessionsPerUser int
	// KeyEncryptionSecret, when set (at least 32 bytes), encrypts the
	// private halves of the stored signing keys.
	KeyEncryptionSecret Secret
	// KeyEncryptionSecretFile is the file KeyEncryptionSecret was read
	// from (surrounding whitespace removed).
	KeyEncryptionSecretFile string
	Throttle                Throttle
}

// Throttle bounds failed logins within a sliding window. A limit of 0
// disables that counter.
type Throttle struct {
	UsernameLimit int
	AddressLimit  int
	Window        time.Duration
}

// Limits bounds request and answer sizes.
type Limits struct {
	// BodyBytes bounds a request body (413 beyond it).
	BodyBytes int64
	// HeaderBytes bounds a request's header (431 beyond it).
	HeaderBytes int64
	// DataBytes bounds an entry's data, as JSON text; at most BodyBytes.
	DataBytes int64
	// ListMax is the largest accepted limit= of a list, and the size of a
	// bare list; ListDefault the page size of a paged list (page= or
	// offset=) without limit= (at most ListMax).
	ListMax     int
	ListDefault int
}

// Caps bound what one caller holds open at once (README.md, "Fair
// share"). 0 means no cap.
type Caps struct {
	// ListsPerUser bounds one caller's concurrent lists.
	ListsPerUser int
	// StreamsPerUser bounds one caller's open change-feed streams.
	StreamsPerUser int
	// ConnsPerAddress bounds one client address's open connections.
	ConnsPerAddress int
}

// LogFormat is the log encoding.
type LogFormat string

// The log formats.
const (
	LogText LogFormat = "text"
	LogJSON LogFormat = "json"
)

// Log configures the slog handler of the binary.
type Log struct {
	Format LogFormat
	// Level is one of slog.LevelDebug, LevelInfo, LevelWarn, LevelError.
	Level slog.Level
}

// Sweep configures the background removal of expired entries.
type Sweep struct {
	Interval time.Duration
	// Batch is how many expired entries one sweep statement removes.
	Batch int
}

// Events configures the change feed (docs/api.md, "Change feed").
type Events struct {
	// Retention is how long changes are kept for resuming subscribers.
	Retention time.Duration
	// Heartbeat is the interval of the keep-alive comment on event
	// streams.
	Heartbeat time.Duration
	// Retry is the reconnection delay announced to clients at the start
	// of every stream (`retry:`).
	Retry time.Duration
}

// DefaultEntityKey and DefaultAssignment make up the cache configuration
// used when the YAML file names neither entities nor assignments.
const (
	DefaultEntityKey  = "userCache"
	DefaultAssignment = "user"
)

// The values of Config.ErrorFormat.
const (
	ErrorFormatCachegate = "cachegate"
	ErrorFormatRockets   = "rockets"
)

// Default returns the configuration with every setting at its default,
// and one entity and one assignment as the cache maps.
func Default() Config {
	c := Config{Cache: Cache{
		Entities: map[string]Entity{DefaultEntityKey: {Table: "user_cache"}},
		Settings: CacheSettings{Assignments: map[string]Assignment{
			DefaultAssignment: {EntityKey: DefaultEntityKey, Policy: domain.PolicyOwner},
		}},
	}}
	for _, s := range settings(&c) {
		if s.def != "" {
			_ = s.parse(s.def) // every default parses (TestSettingDefaultsParse)
		}
	}
	return c
}
