package config

import (
	"errors"
	"net/url"
	"strings"
)

// sqlitePrefix starts a SQLite database URL.
const sqlitePrefix = "sqlite:"

// RedactedDatabase returns c.Database with any password replaced by
// "REDACTED", fit for logs.
func (c Config) RedactedDatabase() string { return RedactDatabaseURL(c.Database) }

// RedactDatabaseURL returns raw with the password of its user info and any
// password or sslpassword query parameter replaced by "REDACTED". A URL
// that does not parse is reduced to its scheme, since it cannot be told
// where a password would sit.
func RedactDatabaseURL(raw string) string {
	if strings.HasPrefix(raw, sqlitePrefix) {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.Index(raw, "://"); i > 0 && !strings.ContainsAny(raw[:i], "@:/") {
			return raw[:i] + "://" + redacted
		}
		return redacted
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	q := u.Query()
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, redacted)
			u.RawQuery = q.Encode() // only then: Encode reorders the query
		}
	}
	return u.String()
}

// errDatabaseScheme is the problem of a URL of no supported dialect.
var errDatabaseScheme = errors.New(`must be "sqlite:PATH", "sqlite::memory:", "postgres://…" or "postgresql://…"`)

// checkDatabase checks a database URL; a SQLite path is taken verbatim.
// Errors never quote the URL, which may hold a password.
func checkDatabase(raw string) error {
	switch {
	case raw == sqlitePrefix:
		return errors.New("must name a file after sqlite:, or :memory:")
	case strings.HasPrefix(raw, sqlitePrefix):
		return nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		if _, err := url.Parse(raw); err != nil {
			return errors.New("is not a valid PostgreSQL URL")
		}
		return nil
	}
	return errDatabaseScheme
}
