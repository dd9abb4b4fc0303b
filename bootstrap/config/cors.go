package config

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// CORS is cross-origin resource sharing for browser apps served from
// other origins (docs/api.md, "Coming from Rockets").
type CORS struct {
	// Origins are the allowed origins as browsers send them in the Origin
	// header ("https://app.example"): scheme and host lowercased, no path,
	// no trailing slash. The single entry "*" allows any origin. Empty
	// (the default) sends no CORS headers at all.
	Origins []string
	// Credentials lets the allowed origins send credentials (cookies,
	// Access-Control-Allow-Credentials: true). It is refused with "*".
	Credentials bool
}

// Enabled reports whether any origin is allowed.
func (c CORS) Enabled() bool { return len(c.Origins) > 0 }

// AnyOrigin reports whether every origin is allowed ("*").
func (c CORS) AnyOrigin() bool { return slices.Contains(c.Origins, "*") }

// parseCORSOrigins reads a comma-separated list of origins, normalised
// (see CORS.Origins); empty items are skipped, so "" is none.
func parseCORSOrigins(v string) (origins []string, _ error) {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" && !slices.Contains(origins, normalOrigin(item)) {
			origins = append(origins, normalOrigin(item))
		}
	}
	return origins, nil
}

// normalOrigin lowercases an origin and drops one trailing slash, so
// "https://App.example/" reads as the browser's "https://app.example".
func normalOrigin(s string) string {
	return strings.TrimSuffix(strings.ToLower(s), "/")
}

// checkCORSOrigins accepts "*" alone, or origins scheme://host[:port]
// with scheme http or https and nothing after the host.
func checkCORSOrigins(c CORS) error {
	if c.AnyOrigin() {
		if len(c.Origins) > 1 {
			return fmt.Errorf("* allows every origin and must be given alone")
		}
		return nil
	}
	var bad []string
	for _, o := range c.Origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
			bad = append(bad, strconv.Quote(o))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: must be origins such as https://app.example or http://localhost:5173 (scheme, host and port only), or *", strings.Join(bad, ", "))
	}
	return nil
}
