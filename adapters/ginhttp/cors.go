package ginhttp

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-contrib/cors"
	"github.com/gin-gonic/gin"
)

// CORSOptions let browser apps served from other origins call the API
// (docs/api.md, "Coming from Rockets").
type CORSOptions struct {
	// Origins are the allowed origins as browsers send them in the Origin
	// header ("https://app.example"); case is ignored. The single entry
	// "*" allows any origin. Empty sends no CORS headers.
	Origins []string
	// Credentials answers Access-Control-Allow-Credentials: true, so the
	// allowed origins may send cookies. New refuses it with "*": browsers
	// ignore credentials with a wildcard origin, and echoing every origin
	// instead would hand any site the user's cookies.
	Credentials bool
}

// CORS constants: what a preflight allows and what responses expose.
var (
	corsMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	corsHeaders = []string{"Authorization", "Content-Type", "If-Match", "If-None-Match", "Last-Event-ID"}
	corsExposed = []string{"ETag", "Location", "Retry-After"}
)

// corsMaxAge is how long a browser may cache a preflight's answer.
const corsMaxAge = 10 * time.Minute

// corsMiddleware returns the CORS handling of o (gin-contrib/cors),
// mounted before routing, so a preflight answers 204 before any guard. A
// request whose Origin is not allowed passes on without CORS headers, for
// the browser to refuse, rather than gin-contrib's bare 403 outside the
// error envelope. Without origins it returns nil.
func corsMiddleware(o *CORSOptions) (gin.HandlerFunc, error) {
	if o == nil || len(o.Origins) == 0 {
		return nil, nil
	}
	anyOrigin := slices.Contains(o.Origins, "*")
	if anyOrigin && len(o.Origins) > 1 {
		return nil, errors.New("ginhttp: the CORS origin * must be given alone")
	}
	if anyOrigin && o.Credentials {
		return nil, errors.New("ginhttp: CORS credentials cannot be allowed for the origin *; list the origins")
	}
	allowed := make([]string, 0, len(o.Origins))
	for _, origin := range o.Origins {
		if anyOrigin {
			break
		}
		if u, err := url.Parse(origin); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(origin, "?#") {
			return nil, errors.New("ginhttp: CORS origin " + strconv.Quote(origin) + " must be scheme://host[:port] with scheme http or https")
		}
		allowed = append(allowed, strings.ToLower(origin))
	}
	allows := func(origin string) bool {
		return origin != "" && origin != "null" && (anyOrigin || slices.Contains(allowed, strings.ToLower(origin)))
	}
	cfg := cors.Config{
		AllowMethods:     corsMethods,
		AllowHeaders:     corsHeaders,
		ExposeHeaders:    corsExposed,
		AllowCredentials: o.Credentials,
		MaxAge:           corsMaxAge,
		AllowAllOrigins:  anyOrigin,
	}
	if !anyOrigin {
		cfg.AllowOriginFunc = allows
	}
	if err := cfg.Validate(); err != nil {
		return nil, errors.New("ginhttp: CORS: " + err.Error())
	}
	handle := cors.New(cfg)
	return func(c *gin.Context) {
		if !allows(c.GetHeader("Origin")) {
			return
		}
		handle(c)
	}, nil
}
