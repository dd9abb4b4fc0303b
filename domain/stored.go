package domain

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxPasswordHashLen bounds a stored password hash, and its salt, in
// bytes; the bcrypt and argon2id hashes cachegate writes are under 100.
const MaxPasswordHashLen = 512

// MaxSigningKeyBytes bounds each half of a stored signing key.
const MaxSigningKeyBytes = 64 << 10

// The rules below hold a record read back whole (an import, README.md,
// "Export and import") to what the paths that make it would accept, as
// Entry.Validate does for entries.

// Validate checks a stored user: a UUID id, the username by
// ValidateUsername, a password hash shaped as a PHC or modular-crypt
// string (printable ASCII beginning with "$") and a salt of printable
// ASCII, each at most MaxPasswordHashLen bytes, and both dates.
func (u User) Validate() error {
	var p fieldProblems
	if !IsUUID(u.ID) {
		p.add(&FieldError{Field: "id", Message: "must be a UUID"})
	}
	var de *Error
	if errors.As(ValidateUsername(u.Username), &de) {
		p = append(p, de.Details...)
	}
	if !strings.HasPrefix(u.PasswordHash, "$") || !printableASCII(u.PasswordHash, MaxPasswordHashLen) {
		p.add(&FieldError{Field: "passwordHash", Message: `must be a PHC or modular-crypt string ("$…") of printable ASCII, at most 512 bytes`})
	}
	if !printableASCII(u.PasswordSalt, MaxPasswordHashLen) {
		p.add(&FieldError{Field: "passwordSalt", Message: "must be printable ASCII of at most 512 bytes"})
	}
	if u.DateCreated.IsZero() || u.DateUpdated.IsZero() {
		p.add(&FieldError{Field: "dateCreated", Message: "both dates are required"})
	}
	return Invalid(p...)
}

// Validate checks a stored signing key: an id by the rules of an entry's
// key, a known algorithm, halves of at most MaxSigningKeyBytes and its
// creation date.
func (k SigningKey) Validate() error {
	var p fieldProblems
	p.add(ValidateKey("id", k.ID))
	if k.Algorithm != "EdDSA" && k.Algorithm != "HS256" {
		p.add(&FieldError{Field: "algorithm", Message: "must be EdDSA or HS256"})
	}
	if len(k.Private) > MaxSigningKeyBytes || len(k.Public) > MaxSigningKeyBytes {
		p.add(&FieldError{Field: "private", Message: "each half must be at most 64 KiB"})
	}
	if k.DateCreated.IsZero() {
		p.add(&FieldError{Field: "dateCreated", Message: "is required"})
	}
	return Invalid(p...)
}

// Validate checks a stored refresh family: a UUID user id, token ids by
// the rules of an entry's key, the address and user agent as a login
// records them (text of at most 255 and MaxUserAgentLen bytes).
func (f RefreshFamily) Validate() error {
	var p fieldProblems
	p.add(ValidateKey("id", f.ID))
	p.add(ValidateAssigneeID("userId", f.UserID))
	if f.CurrentID != "" {
		p.add(ValidateKey("currentId", f.CurrentID))
	}
	for _, u := range f.Used {
		p.add(ValidateKey("used.id", u.ID))
	}
	p.add(sessionText("address", f.Address, MaxKeyLen))
	p.add(sessionText("userAgent", f.UserAgent, MaxUserAgentLen))
	return Invalid(p...)
}

// Validate checks a refresh token of an archive of format version 1 by
// the rules of RefreshFamily.Validate.
func (r RefreshRecord) Validate() error {
	var p fieldProblems
	p.add(ValidateKey("id", r.ID))
	p.add(ValidateKey("familyId", r.FamilyID))
	p.add(ValidateAssigneeID("userId", r.UserID))
	return Invalid(p...)
}

func sessionText(field, v string, maxBytes int) *FieldError {
	if len(v) > maxBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return &FieldError{Field: field, Message: "must be valid UTF-8 without NUL, at most " + strconv.Itoa(maxBytes) + " bytes"}
	}
	return nil
}

// printableASCII reports whether s is at most maxBytes of printable ASCII
// (no space, no control character).
func printableASCII(s string, maxBytes int) bool {
	if len(s) > maxBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
