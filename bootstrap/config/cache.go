package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/cachegate/cachegate/domain"
)

var (
	// tablePattern is what a table name must match: a lower-case SQL
	// identifier both SQLite and PostgreSQL accept unquoted (63 bytes at
	// most, PostgreSQL's limit).
	tablePattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	// reservedTables are cachegate's own tables (bunstore's authentication
	// tables and migration history); a cache table of the same name would
	// collide with them.
	reservedTables = map[string]bool{
		"users": true, "refresh_tokens": true, "refresh_families": true, "signing_keys": true, "login_failures": true,
		"cachegate_migrations": true, "cachegate_migration_locks": true, "cache_usage": true,
	}
	// assignmentPattern is what an assignment name, a URL path segment,
	// must match.
	assignmentPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// applyCache puts the file's cache maps into c. Absent maps keep their
// defaults, except that entities without userCache and no assignments
// leave no assignment (an error), rather than a default assignment to an
// entity that does not exist.
func applyCache(c *Config, fv file) []error {
	var errs []error
	if fv.entities != nil {
		c.Cache.Entities = make(map[string]Entity, len(fv.entities))
		for name, e := range fv.entities {
			t := SnakeCase(name)
			if e.table.set {
				t = e.table.text
			}
			c.Cache.Entities[name] = Entity{Table: t}
		}
	}
	if fv.assignments != nil {
		c.Cache.Settings.Assignments = make(map[string]Assignment, len(fv.assignments))
		for _, name := range slices.Sorted(maps.Keys(fv.assignments)) {
			a := fv.assignments[name]
			out := Assignment{Policy: domain.PolicyOwner}
			if a.entityKey.set {
				out.EntityKey = a.entityKey.text
			}
			if a.policy.set {
				if p, ok := domain.ParsePolicy(a.policy.text); ok {
					out.Policy = p
				} else {
					errs = append(errs, fmt.Errorf("%s.%s.policy: %q must be owner, authenticated or public (config line %d)",
						assignmentsKey, name, a.policy.text, a.policy.line))
				}
			}
			if a.maxEntries.set {
				n, err := parseInt[int64](a.maxEntries.text)
				if err == nil {
					err = checkRange(n, 0, maxQuotaEntries)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("%s.%s.maxEntries: %w (config line %d)", assignmentsKey, name, err, a.maxEntries.line))
				} else {
					out.MaxEntries = ptr(n)
				}
			}
			if a.maxBytes.set {
				n, err := parseSizeUpTo(a.maxBytes.text, maxQuotaBytes)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s.%s.maxBytes: %w (config line %d)", assignmentsKey, name, err, a.maxBytes.line))
				} else {
					out.MaxBytes = ptr(n)
				}
			}
			c.Cache.Settings.Assignments[name] = out
		}
	} else if _, ok := c.Cache.Entities[DefaultEntityKey]; !ok {
		c.Cache.Settings.Assignments = map[string]Assignment{}
	}
	return append(errs, c.checkCache()...)
}

// checkCache checks the cache maps: tables, assignment names, each
// assignment's entity, policy and quota, and that there is one.
func (c Config) checkCache() []error {
	var errs []error
	tables := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(c.Cache.Entities)) {
		path := entitiesKey + "." + name
		if strings.TrimSpace(name) == "" {
			errs = append(errs, fmt.Errorf("%s: %q is not a valid entity key: it must not be blank", entitiesKey, name))
		}
		t := c.Cache.Entities[name].Table
		switch other, dup := tables[t]; {
		case !tablePattern.MatchString(t):
			errs = append(errs, fmt.Errorf("%s.table: %q must match %s", path, t, tablePattern))
		case reservedTables[t]:
			errs = append(errs, fmt.Errorf("%s.table: %q is one of cachegate's own tables", path, t))
		case dup:
			errs = append(errs, fmt.Errorf("%s.table: %q is also the table of %s.%s", path, t, entitiesKey, other))
		default:
			tables[t] = name
		}
	}
	if len(c.Cache.Settings.Assignments) == 0 {
		errs = append(errs, fmt.Errorf("%s: at least one assignment is required", assignmentsKey))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Cache.Settings.Assignments)) {
		a := c.Cache.Settings.Assignments[name]
		path := assignmentsKey + "." + name
		if !assignmentPattern.MatchString(name) {
			errs = append(errs, fmt.Errorf("%s: %q is not a valid assignment name: it must match %s", assignmentsKey, name, assignmentPattern))
		}
		if _, ok := c.Cache.Entities[a.EntityKey]; !ok {
			if a.EntityKey == "" {
				errs = append(errs, fmt.Errorf("%s.entityKey: must name a key of %s", path, entitiesKey))
			} else {
				errs = append(errs, fmt.Errorf("%s.entityKey: %q is not a key of %s", path, a.EntityKey, entitiesKey))
			}
		}
		if _, ok := domain.ParsePolicy(a.Policy.String()); !ok {
			errs = append(errs, fmt.Errorf("%s.policy: must be owner, authenticated or public", path))
		}
		if a.MaxEntries != nil && (*a.MaxEntries < 0 || *a.MaxEntries > maxQuotaEntries) {
			errs = append(errs, fmt.Errorf("%s.maxEntries: %d must be between 0 and %d", path, *a.MaxEntries, int64(maxQuotaEntries)))
		}
		if a.MaxBytes != nil && (*a.MaxBytes < 0 || *a.MaxBytes > maxQuotaBytes) {
			errs = append(errs, fmt.Errorf("%s.maxBytes: %d must be between 0 and %d", path, *a.MaxBytes, int64(maxQuotaBytes)))
		}
	}
	return errs
}

func ptr[T any](v T) *T { return &v }

// SnakeCase returns the default table of an entity key: its snake_case
// form, with dashes, dots and spaces as underscores (userCache → user_cache,
// HTTPCache → http_cache, org-cache → org_cache).
func SnakeCase(key string) string {
	rs := []rune(key)
	var b strings.Builder
	under := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r):
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				under()
			}
			b.WriteRune(unicode.ToLower(r))
		case r == '-' || r == '.' || r == ' ':
			under()
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
