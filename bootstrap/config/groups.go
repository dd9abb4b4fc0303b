package config

// Group is a set of settings that some command reads; RegisterGroups
// defines the flags of the groups given, so a command's --help lists only
// the settings it reads (README.md, "Commands").
type Group uint

// The groups of settings.
const (
	// GroupStorage: the database, its timeout, the logs (and --config,
	// always defined).
	GroupStorage Group = 1 << iota
	// GroupPasswords: password hashing.
	GroupPasswords
	// GroupKeys: the signing keys and the tokens they sign.
	GroupKeys
	// GroupServer: what only the HTTP service reads.
	GroupServer
	// GroupData: the bound on what an entry holds (--data-bytes), which
	// import holds its records to as the HTTP service holds writes.
	GroupData

	// GroupAll is every group.
	GroupAll = GroupStorage | GroupPasswords | GroupKeys | GroupServer | GroupData
)

// groups names the group of each setting read outside the HTTP service;
// every other setting is GroupServer's. A setting in none of the two
// (one added without a thought for the commands) is in every group, so
// that no command loses a flag it may read.
var groups = map[string]Group{
	"database":                   GroupStorage,
	"database-timeout":           GroupStorage,
	"log-format":                 GroupStorage,
	"log-level":                  GroupStorage,
	"password-algorithm":         GroupPasswords,
	"bcrypt-cost":                GroupPasswords,
	"issuer":                     GroupKeys,
	"audience":                   GroupKeys,
	"access-token-ttl":           GroupKeys,
	"refresh-token-ttl":          GroupKeys,
	secretFlag:                   GroupKeys,
	secretFileFlag:               GroupKeys,
	"key-encryption-secret-file": GroupKeys,
	"client-id":                  GroupKeys,
	"key-publish-ahead":          GroupKeys,
	"data-bytes":                 GroupData,
}

// serverSettings are the settings only the HTTP service reads.
var serverSettings = []string{
	"addr", "metrics-addr", "metrics-token-file", "error-format", "trusted-proxies", "cors-origins",
	"cors-credentials", "shutdown-timeout", "cache-expires-in", "quota-max-entries", "quota-max-bytes",
	"enable-guards", "username-field", "password-field", "refresh-from", "refresh-reuse-grace",
	"session-max", "max-sessions-per-user", "throttle-username-limit", "throttle-address-limit", "throttle-window",
	"body-bytes", "max-header-bytes", "list-max", "list-default", "sweep-interval",
	"audit-retention", "sweep-batch", "events-retention", "events-heartbeat", "events-retry",
	"max-lists-per-user", "max-streams-per-user", "max-conns-per-address", "query-timeout",
	"database-user-statements", "database-user-time", "database-user-burst", "audit-fold-window", "console",
	"setup-from-anywhere",
}

func init() {
	for _, f := range serverSettings {
		groups[f] = GroupServer
	}
}

// groupOf returns the group of the setting whose flag is flag.
func groupOf(flag string) Group {
	if g, ok := groups[flag]; ok {
		return g
	}
	return GroupAll
}
