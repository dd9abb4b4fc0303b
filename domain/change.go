package domain

import "time"

// ChangeKind says what happened to an entry.
type ChangeKind uint8

// The kinds of change. Expired is recorded when the sweeper (or a write
// that needs the row's place) reclaims an entry that expired.
const (
	ChangeCreated ChangeKind = iota + 1
	ChangeUpdated
	ChangeDeleted
	ChangeExpired
)

var changeKindNames = [...]string{ChangeCreated: "created", ChangeUpdated: "updated",
	ChangeDeleted: "deleted", ChangeExpired: "expired"}

// String returns "created", "updated", "deleted" or "expired".
func (k ChangeKind) String() string {
	if int(k) < len(changeKindNames) && k > 0 {
		return changeKindNames[k]
	}
	return "unknown"
}

// ParseChangeKind reads a kind written by String.
func ParseChangeKind(s string) (ChangeKind, bool) {
	for k, n := range changeKindNames {
		if n != "" && n == s {
			return ChangeKind(k), true
		}
	}
	return 0, false
}

// Change is one record of the change log: revision Rev (strictly
// increasing over the whole database, shared by replicas) changed Entry of
// the entity Entity. For deleted and expired changes Entry is the entry as
// it last was, with DateDeleted set.
type Change struct {
	Rev    int64
	Entity string
	Kind   ChangeKind
	Entry  Entry
	// At is when the change was recorded, by the store's clock.
	At time.Time
}
