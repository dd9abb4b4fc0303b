package application

import (
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// CacheInput is the cache argument of create, update and replace: every
// field of an entry a client chooses.
type CacheInput struct {
	Key        string
	Type       string
	AssigneeID string
	// Data is one JSON value, kept byte for byte.
	Data []byte
	// ExpiresIn is a duration of domain.ParseDuration; nil asks for the
	// store's default expiry.
	ExpiresIn *string
}

// CacheRef names an entry by its natural key (docs/api.md, "The Go API": get and delete).
type CacheRef struct {
	Key        string
	Type       string
	AssigneeID string
}

// Preconditions are the conditional-request headers of PUT, PATCH and
// DELETE.
type Preconditions struct {
	// IfMatch, when set, requires the stored version to equal it.
	IfMatch *int
	// IfNoneMatchAny (If-None-Match: *) allows creating only.
	IfNoneMatchAny bool
}

// check applies IfMatch to the stored entry.
func (p Preconditions) check(e domain.Entry) error {
	if p.IfMatch != nil && *p.IfMatch != e.Version {
		return domain.ErrVersionMismatch
	}
	return nil
}

// normalizeID lower-cases an entry id and reports whether it can exist.
func normalizeID(id string) (string, bool) {
	if !domain.IsUUID(id) {
		return "", false
	}
	return strings.ToLower(id), true
}

// validate checks in by the entry's rules (domain.EntryInput.Validate,
// whose fields CacheInput mirrors) and returns it normalised.
func (in CacheInput) validate(maxData int) (domain.EntryInput, error) {
	return domain.EntryInput(in).Validate(maxData)
}
