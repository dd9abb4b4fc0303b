package domain

import (
	"time"
	"unicode/utf8"
)

// Session is a refresh family as the admin API and self-service show it
// (docs/admin.md): its id is the sid claim of the tokens of one login.
type Session struct {
	ID          string
	UserID      string
	DateCreated time.Time
	// LastUsed is the last login or refresh of the family (the issue of
	// its live token).
	LastUsed time.Time
	// Address and UserAgent are those of the last login or refresh.
	Address   string
	UserAgent string
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// MaxUserAgentLen bounds the User-Agent a session keeps, in bytes.
const MaxUserAgentLen = 256

// CutUserAgent returns ua cut to MaxUserAgentLen bytes at a character
// boundary.
func CutUserAgent(ua string) string { return cutBytes(ua, MaxUserAgentLen) }

// cutBytes returns s cut to at most n bytes at a character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
