package application

import (
	"strings"
	"time"

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

// validate checks in and returns it normalised.
func (in CacheInput) validate(maxData int) (CacheInput, error) {
	var problems []domain.FieldError
	add := func(fe *domain.FieldError) {
		if fe != nil {
			problems = append(problems, *fe)
		}
	}
	add(domain.ValidateKey("key", in.Key))
	add(domain.ValidateKey("type", in.Type))
	add(domain.ValidateAssigneeID("assignee.id", in.AssigneeID))
	add(domain.ValidateData("data", in.Data, maxData))
	if in.ExpiresIn != nil {
		if _, err := domain.ParseDuration(*in.ExpiresIn); err != nil {
			problems = append(problems, domain.FieldError{Field: "expiresIn", Message: err.Error()})
		}
	}
	in.AssigneeID = strings.ToLower(in.AssigneeID)
	return in, domain.Invalid(problems...)
}

// expiry returns the expiry instant for expiresIn given at now; a nil
// expiresIn takes the store's default. expiresIn must have been validated.
func expiry(st *Assignment, expiresIn *string, now time.Time) *time.Time {
	d := st.DefaultExpiresIn
	if expiresIn != nil {
		d, _ = domain.ParseDuration(*expiresIn)
	}
	if d <= 0 {
		return nil
	}
	t := domain.Normalize(now.Add(d))
	return &t
}

// apply writes in onto e as of now.
func (in CacheInput) apply(st *Assignment, e *domain.Entry, now time.Time) {
	e.Key, e.Type, e.AssigneeID = in.Key, in.Type, in.AssigneeID
	e.Data = append([]byte(nil), in.Data...)
	e.ExpiresAt = expiry(st, in.ExpiresIn, now)
	e.DateUpdated = now
}
