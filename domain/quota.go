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

// Quota bounds what one assignee may keep in one assignment: at most
// MaxEntries entries and MaxBytes bytes of data (the entries' JSON text,
// summed). Zero in either field means no limit on that count, so the zero
// Quota limits nothing.
//
// Only entries that are neither deleted nor expired count. A write is
// refused only when it grows a count past its limit: an update that keeps
// or shrinks an entry passes even when the assignee is over a quota that
// was lowered meanwhile.
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

// Usage is what one assignee keeps in one store: entries and bytes of
// data.
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
		return quotaExceeded("bytes of data", q.MaxBytes)
	}
	return nil
}

// Growth returns how much writing next in place of prev grows next's
// assignee's usage: by one entry when the entry is new to that assignee
// (prev is nil, or had another assignee), and by the bytes of data it
// adds. A deleted next grows nothing.
func Growth(prev *Entry, next Entry) (entries, bytes int64) {
	switch {
	case next.DateDeleted != nil:
		return 0, 0
	case prev == nil || prev.DateDeleted != nil || prev.AssigneeID != next.AssigneeID:
		return 1, int64(len(next.Data))
	}
	return 0, int64(len(next.Data)) - int64(len(prev.Data))
}

// quotaExceeded is ErrCacheQuotaExceeded saying which limit was reached.
func quotaExceeded(what string, limit int64) error {
	e := *ErrCacheQuotaExceeded
	e.Message = "the assignee's quota in this assignment is used up: at most " +
		strconv.FormatInt(limit, 10) + " " + what
	return &e
}
