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
