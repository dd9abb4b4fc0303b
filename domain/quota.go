package domain

import (
	"errors"
	"strconv"
)

// The default quota of an assignee in one assignment (docs/api.md,
// "Quotas").
const (
	DefaultQuotaMaxEntries = 10_000
	DefaultQuotaMaxBytes   = 64 << 20
)

// Quota bounds what one assignee's writes keep in one assignment: at most
// MaxEntries entries and MaxBytes bytes, counted as docs/api.md, "Quotas"
// says (entries until removed, dead ones too; the bytes of their data, of
// each retained change, ChangeBytes, and of each idempotency record,
// RecordBytes). Zero in either field means no limit on that count, so the
// zero Quota limits nothing. A delete is never refused.
type Quota struct {
	MaxEntries int64
	MaxBytes   int64
}

// DefaultQuota returns the quota an assignment has unless configured
// otherwise.
func DefaultQuota() Quota {
	return Quota{MaxEntries: DefaultQuotaMaxEntries, MaxBytes: DefaultQuotaMaxBytes}
}

// NewQuota returns the quota of maxEntries and maxBytes, or an error when
// either is negative.
func NewQuota(maxEntries, maxBytes int64) (Quota, error) {
	if maxEntries < 0 || maxBytes < 0 {
		return Quota{}, errors.New("quota limits must not be negative (0 means no limit)")
	}
	return Quota{MaxEntries: maxEntries, MaxBytes: maxBytes}, nil
}

// Unlimited reports whether q limits nothing.
func (q Quota) Unlimited() bool { return q.MaxEntries <= 0 && q.MaxBytes <= 0 }

// Usage is what one assignee keeps in one store: entries, and bytes as
// Quota counts them.
type Usage struct {
	Entries int64
	Bytes   int64
}

// Admit returns nil when an assignee using u may grow by entries and bytes
// under q, and the quota error naming the limit it would pass otherwise.
// A count that does not grow (zero or less) is never refused.
func (q Quota) Admit(u Usage, entries, bytes int64) error {
	switch {
	case entries > 0 && q.MaxEntries > 0 && u.Entries+entries > q.MaxEntries:
		return quotaExceeded("entries", q.MaxEntries)
	case bytes > 0 && q.MaxBytes > 0 && u.Bytes+bytes > q.MaxBytes:
		return quotaExceeded("bytes", q.MaxBytes)
	}
	return nil
}

// RetainedRowBytes is what the quota charges a retained copy (a change
// kept for the change feed, an idempotency record) besides the text it
// holds: about what its ids, dates and index entries take on disk, so that
// many small copies cannot outgrow the quota.
const RetainedRowBytes = 256

// ChangeBytes is what the change that writes e keeps: its data, key and
// type, and RetainedRowBytes.
func ChangeBytes(e Entry) int64 {
	return int64(len(e.Data)+len(e.Key)+len(e.Type)) + RetainedRowBytes
}

// RecordBytes is what an idempotency record of scope and key answering e
// keeps: the entry's change (ChangeBytes) and the record's own names.
func RecordBytes(scope, key string, e Entry) int64 {
	return ChangeBytes(e) + int64(len(scope)+len(key))
}

// Growth returns how much writing next in place of prev (nil for a new
// entry) grows next's assignee's usage: by one entry and its data when the
// entry is new to that assignee (prev is nil or had another assignee),
// else by the change in data size, and always by the change it logs
// (ChangeBytes). A delete (next deleted) is never refused, so it grows
// nothing here.
func Growth(prev *Entry, next Entry) (entries, bytes int64) {
	switch {
	case next.DateDeleted != nil:
		return 0, 0
	case prev == nil || prev.DateDeleted != nil || prev.AssigneeID != next.AssigneeID:
		return 1, int64(len(next.Data)) + ChangeBytes(next)
	}
	return 0, int64(len(next.Data)) - int64(len(prev.Data)) + ChangeBytes(next)
}

// quotaExceeded is ErrCacheQuotaExceeded saying which limit was reached.
func quotaExceeded(what string, limit int64) error {
	e := *ErrCacheQuotaExceeded
	e.Message = "the assignee's quota in this assignment is used up: at most " +
		strconv.FormatInt(limit, 10) + " " + what + " (counted: entries until removed, deleted and expired ones too, " +
		"and the copies kept of each write — its change for the change feed's retention, its idempotency record for 24 h — " +
		"which free up as they expire)"
	return &e
}
