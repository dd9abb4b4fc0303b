package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxUsernameLen bounds usernames, in characters.
const MaxUsernameLen = 320

// MaxPasswordBytes bounds passwords; bcrypt reads at most 72 bytes, and a
// longer limit only guards the hash functions against huge inputs.
const MaxPasswordBytes = 1024

// User is a local-login account: the credentials record of a local login (docs/api.md, "Authentication").
type User struct {
	ID       string
	Username string
	// PasswordHash is a PHC or modular-crypt string ($2b$…, $argon2id$…).
	PasswordHash string
	// PasswordSalt is kept for hashes from systems that store the salt
	// apart; bcrypt and argon2id embed theirs and leave it empty.
	PasswordSalt string
	Active       bool
	// Admin grants the admin API (docs/admin.md); checked against the
	// store on every admin request.
	Admin       bool
	DateCreated time.Time
	DateUpdated time.Time
}

// ActiveAdmin reports whether u can use the admin API: an active admin.
// The stores keep at least one (ErrLastAdmin).
func (u User) ActiveAdmin() bool { return u.Active && u.Admin }

// NormalizeUsername returns the form usernames are compared in:
// surrounding spaces trimmed, lower case. Usernames are unique in this form.
func NormalizeUsername(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// CheckUsername checks what any username compared with the stored ones
// must be: not empty once trimmed, valid UTF-8 of at most MaxUsernameLen
// characters, without NUL. A login checks only this, so that a user
// stored before ValidateUsername refused control characters can still
// sign in.
func CheckUsername(s string) error {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return InvalidField("username", "must not be empty")
	case !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxUsernameLen || strings.IndexByte(s, 0) >= 0:
		return InvalidField("username", "must be valid UTF-8 of at most 320 characters, without NUL")
	}
	return nil
}

// ValidateUsername checks a username for creation, by every path that
// makes one (CLI, admin API, import): CheckUsername's rules, and no
// control character (C0, DEL, C1) anywhere in it, surrounding spaces
// included, as they would act on the terminal or break the line of
// whoever reads the name.
func ValidateUsername(s string) error {
	if err := CheckUsername(s); err != nil {
		return err
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return InvalidField("username", "must not contain control characters (such as line breaks, tabs or escape)")
	}
	return nil
}

// ValidatePassword checks a new password.
func ValidatePassword(p string) error {
	switch {
	case len(p) < 8:
		return InvalidField("password", "must be at least 8 bytes")
	case len(p) > MaxPasswordBytes:
		return InvalidField("password", "must be at most 1024 bytes")
	}
	return nil
}
