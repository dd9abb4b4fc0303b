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

// crossSite reports whether r comes from a page of another site, for
// the routes that act on a cookie the browser sends by itself (refresh
// from a cookie): then a cross-site form or fetch could rotate a victim's
// token and get the victim's family revoked.
//
// It is cross-site when Sec-Fetch-Site says "cross-site", or when Origin
// is present and is neither one of origins (the CORS origins, the sites
// allowed to call the API from a browser) nor the request's own origin
// (same scheme-less host as the Host header: a page served by the API's
// own host). "null" (sandboxed frames, file: pages) is never allowed,
// and neither is any site through a CORS wildcard "*": a form posted
// from anywhere would carry the cookie.
// Requests without Origin and Sec-Fetch-Site are not from a browser page
// (browsers send Origin on every cross-origin request and on every POST),
// so programs keep refreshing as before.
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
