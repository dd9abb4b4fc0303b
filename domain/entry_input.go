package domain

import (
	"strings"
	"time"
)

// EntryInput is every field of an entry that a client chooses: what a
// create or a replace writes. Validate, EntryPatch.Validate and
// Entry.Validate are the one place the entry's rules are checked; the
// stores trust them (ARCHITECTURE.md, "Who owns what").
type EntryInput struct {
	Key        string
	Type       string
	AssigneeID string
	// Data is one JSON value, kept byte for byte.
	Data []byte
	// ExpiresIn is a duration of ParseDuration; nil asks for the
	// assignment's default expiry.
	ExpiresIn *string
}

// Validate checks every field of in and returns it normalised (the
// assignee id in lower case). The error is a KindInvalid *Error listing
// each field that breaks a rule, in the order key, type, assignee.id,
// data, expiresIn; clients read these fields and messages, so they are
// stable. maxData bounds the data in bytes; 0 or less means no bound.
func (in EntryInput) Validate(maxData int) (EntryInput, error) {
	var p fieldProblems
	p.add(ValidateKey("key", in.Key))
	p.add(ValidateKey("type", in.Type))
	p.add(ValidateAssigneeID("assignee.id", in.AssigneeID))
	p.add(ValidateData("data", in.Data, maxData))
	p.add(validateExpiresIn(in.ExpiresIn))
	in.AssigneeID = strings.ToLower(in.AssigneeID)
	return in, Invalid(p...)
}

// Apply writes every field of in onto e as of now: the expiry is
// recomputed from now (ExpiryAt), DateUpdated moves to now. in must have
// passed Validate. The data is copied, so e never shares the caller's
// bytes.
func (in EntryInput) Apply(e *Entry, now time.Time, defaultExpiresIn time.Duration) {
	e.Key, e.Type, e.AssigneeID = in.Key, in.Type, in.AssigneeID
	e.Data = append([]byte(nil), in.Data...)
	e.ExpiresAt = ExpiryAt(in.ExpiresIn, defaultExpiresIn, now)
	e.DateUpdated = now
}

// EntryPatch is a partial change of an entry (HTTP PATCH): nil fields
// stay as they are.
type EntryPatch struct {
	Key        *string
	Type       *string
	AssigneeID *string
	Data       []byte
	// ExpiresInSet says expiresIn was given; ExpiresIn nil then asks for
	// the assignment's default expiry, computed from now.
	ExpiresInSet bool
	ExpiresIn    *string
}

// Validate checks the fields p changes by the rules of EntryInput.Validate
// (same fields, messages and order) and returns p normalised.
func (p EntryPatch) Validate(maxData int) (EntryPatch, error) {
	var ps fieldProblems
	if p.Key != nil {
		ps.add(ValidateKey("key", *p.Key))
	}
	if p.Type != nil {
		ps.add(ValidateKey("type", *p.Type))
	}
	if p.AssigneeID != nil {
		ps.add(ValidateAssigneeID("assignee.id", *p.AssigneeID))
		a := strings.ToLower(*p.AssigneeID)
		p.AssigneeID = &a
	}
	if p.Data != nil {
		ps.add(ValidateData("data", p.Data, maxData))
	}
	ps.add(validateExpiresIn(p.ExpiresIn))
	return p, Invalid(ps...)
}

// Apply writes the fields p changes onto e as of now; DateUpdated moves
// to now. p must have passed Validate.
func (p EntryPatch) Apply(e *Entry, now time.Time, defaultExpiresIn time.Duration) {
	if p.Key != nil {
		e.Key = *p.Key
	}
	if p.Type != nil {
		e.Type = *p.Type
	}
	if p.AssigneeID != nil {
		e.AssigneeID = *p.AssigneeID
	}
	if p.Data != nil {
		e.Data = append([]byte(nil), p.Data...)
	}
	if p.ExpiresInSet {
		e.ExpiresAt = ExpiryAt(p.ExpiresIn, defaultExpiresIn, now)
	}
	e.DateUpdated = now
}

// Validate checks a natural key by the rules of EntryInput.Validate
// (fields key, type, assignee.id) and returns it normalised.
func (k NaturalKey) Validate() (NaturalKey, error) {
	var p fieldProblems
	p.add(ValidateKey("key", k.Key))
	p.add(ValidateKey("type", k.Type))
	p.add(ValidateAssigneeID("assignee.id", k.AssigneeID))
	k.AssigneeID = strings.ToLower(k.AssigneeID)
	return k, Invalid(p...)
}

// ParseAssigneeID checks an assignee id (field assignee.id) and returns it
// in lower case, the form every store keeps.
func ParseAssigneeID(v string) (string, error) {
	if fe := ValidateAssigneeID("assignee.id", v); fe != nil {
		return "", Invalid(*fe)
	}
	return strings.ToLower(v), nil
}

// errIDNotUUID is the problem of an entry id that is not a UUID.
var errIDNotUUID = FieldError{Field: "id", Message: "must be a UUID"}

// ParseEntryID checks an entry id chosen by a client (field id) and
// returns it in lower case, the form every store keeps.
func ParseEntryID(v string) (string, error) {
	if !IsUUID(v) {
		return "", Invalid(errIDNotUUID)
	}
	return strings.ToLower(v), nil
}

// Validate checks a whole stored entry, as an import reads it: a UUID id,
// the client fields by the rules of EntryInput.Validate, a version of at
// least 1 and both dates. It returns e with its ids in lower case.
// maxData bounds the data; 0 or less means no bound.
func (e Entry) Validate(maxData int) (Entry, error) {
	var p fieldProblems
	if !IsUUID(e.ID) {
		p.add(&errIDNotUUID)
	}
	p.add(ValidateKey("key", e.Key))
	p.add(ValidateKey("type", e.Type))
	p.add(ValidateAssigneeID("assignee.id", e.AssigneeID))
	p.add(ValidateData("data", e.Data, maxData))
	if e.Version < 1 {
		p.add(&FieldError{Field: "version", Message: "must be at least 1"})
	}
	if e.DateCreated.IsZero() {
		p.add(&FieldError{Field: "dateCreated", Message: "is required"})
	}
	if e.DateUpdated.IsZero() {
		p.add(&FieldError{Field: "dateUpdated", Message: "is required"})
	}
	if err := Invalid(p...); err != nil {
		return Entry{}, err
	}
	e.ID, e.AssigneeID = strings.ToLower(e.ID), strings.ToLower(e.AssigneeID)
	return e, nil
}

// ExpiryAt is the expiry instant of an entry written at now with
// expiresIn (which must have passed validation); nil takes
// defaultExpiresIn, and a zero duration means no expiry (nil).
func ExpiryAt(expiresIn *string, defaultExpiresIn time.Duration, now time.Time) *time.Time {
	d := defaultExpiresIn
	if expiresIn != nil {
		d, _ = ParseDuration(*expiresIn)
	}
	if d <= 0 {
		return nil
	}
	t := Normalize(now.Add(d))
	return &t
}

// validateExpiresIn checks an optional expiresIn (nil is valid).
func validateExpiresIn(v *string) *FieldError {
	if v == nil {
		return nil
	}
	if _, err := ParseDuration(*v); err != nil {
		return &FieldError{Field: "expiresIn", Message: err.Error()}
	}
	return nil
}

// fieldProblems collects the problems of one value's fields.
type fieldProblems []FieldError

func (p *fieldProblems) add(fe *FieldError) {
	if fe != nil {
		*p = append(*p, *fe)
	}
}
