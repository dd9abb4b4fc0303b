package domain

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxKeyLen is the longest key or type, in characters.
const MaxKeyLen = 255

// DefaultMaxDataBytes is the default limit on an entry's data, in bytes of
// its JSON encoding.
const DefaultMaxDataBytes = 256 << 10

// Entry is one cache entry. It is unique among live entries of its store by
// (Key, Type, AssigneeID).
type Entry struct {
	ID         string
	Key        string
	Type       string
	AssigneeID string
	// Data is the entry's value as JSON text, kept byte for byte as given.
	Data        []byte
	Version     int
	DateCreated time.Time
	DateUpdated time.Time
	DateDeleted *time.Time
	// ExpiresAt is the instant the entry stops being visible; nil never.
	ExpiresAt *time.Time
}

// Live reports whether e is visible at now: not deleted and not expired.
// An entry is expired from the instant ExpiresAt is reached.
func (e Entry) Live(now time.Time) bool {
	return e.DateDeleted == nil && (e.ExpiresAt == nil || now.Before(*e.ExpiresAt))
}

// NaturalKey is the identity of an entry within its store.
type NaturalKey struct {
	Key        string
	Type       string
	AssigneeID string
}

// NaturalKey returns e's (key, type, assignee) identity.
func (e Entry) NaturalKey() NaturalKey {
	return NaturalKey{Key: e.Key, Type: e.Type, AssigneeID: e.AssigneeID}
}

// Normalize returns t in UTC truncated to microseconds, the precision every
// store round-trips identically. It is the one place that rule lives:
// stores call it (or NormalizePtr, Entry.Normalized) rather than repeat it.
func Normalize(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// NormalizePtr is Normalize for an optional time; it returns a new pointer
// (nil for nil), so the caller's time is never shared.
func NormalizePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	n := Normalize(*t)
	return &n
}

// Normalized returns e with every time normalized (see Normalize).
func (e Entry) Normalized() Entry {
	e.DateCreated = Normalize(e.DateCreated)
	e.DateUpdated = Normalize(e.DateUpdated)
	e.DateDeleted = NormalizePtr(e.DateDeleted)
	e.ExpiresAt = NormalizePtr(e.ExpiresAt)
	return e
}

// ValidateKey checks a key or type value; field names it in the error.
func ValidateKey(field, v string) *FieldError {
	switch {
	case v == "":
		return &FieldError{Field: field, Message: "must be a non-empty string"}
	case !utf8.ValidString(v):
		return &FieldError{Field: field, Message: "must be valid UTF-8"}
	case strings.IndexByte(v, 0) >= 0:
		// No SQL text column keeps a NUL.
		return &FieldError{Field: field, Message: "must not contain the NUL character"}
	case utf8.RuneCountInString(v) > MaxKeyLen:
		return &FieldError{Field: field, Message: "must be at most 255 characters"}
	}
	return nil
}

// ValidateAssigneeID checks that v is a UUID in its canonical textual form.
func ValidateAssigneeID(field, v string) *FieldError {
	if !IsUUID(v) {
		return &FieldError{Field: field, Message: "must be a UUID"}
	}
	return nil
}

// ValidateData checks that data is one JSON value of at most maxBytes.
func ValidateData(field string, data []byte, maxBytes int) *FieldError {
	switch {
	case len(data) == 0:
		return &FieldError{Field: field, Message: "is required"}
	case maxBytes > 0 && len(data) > maxBytes:
		return &FieldError{Field: field, Message: "is larger than the limit of " + strconv.Itoa(maxBytes) + " bytes"}
	case !utf8.Valid(data) || !json.Valid(data):
		return &FieldError{Field: field, Message: "must be a JSON value"}
	}
	return nil
}

// IsUUID reports whether s is a UUID written as 8-4-4-4-12 hex digits.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
