package ginhttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
)

// errCrossSiteRefresh refuses a cookie refresh from another site
// (docs/api.md, "Authentication").
var errCrossSiteRefresh = &web.ProtocolError{Status: http.StatusForbidden, Code: "CROSS_SITE_REQUEST_REFUSED",
	Message: "A refresh token cookie is not accepted from another site"}

// crossSite reports whether r comes from a page of another site, for a
// refresh from a cookie the browser sends by itself: a cross-site form
// could otherwise rotate a victim's token and get its family revoked. It
// is when Sec-Fetch-Site says "cross-site", or Origin is neither one of
// origins (the CORS origins; a wildcard "*" admits none) nor the API's own
// host; "null" never passes. Without either header the request is no
// browser page's (ARCHITECTURE.md, "Threat model").
func crossSite(r *http.Request, origins []string) bool {
	if strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	for _, o := range origins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return false
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || origin == "null" {
		return true
	}
	return !strings.EqualFold(u.Host, r.Host)
}
