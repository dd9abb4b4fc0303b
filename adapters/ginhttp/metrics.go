package ginhttp

import (
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

// MetricsOptions mount GET /metrics on the server (README.md, "What the API does").
// A scrape is served to a request carrying the metrics token, or to an
// administrator; anyone else is refused (401 without valid credentials,
// 403 for a user who is not an administrator), whether guards are enabled
// or not: the metrics describe every user's traffic.
type MetricsOptions struct {
	// Handler serves the scrape (Prometheus text, or OpenMetrics when
	// asked).
	Handler http.Handler
	// Token, when not empty, admits a request with "Authorization: Bearer
	// <Token>"; it is compared in constant time. Empty admits no token.
	Token string
	// Admin reports whether an authenticated caller may read the metrics
	// as an administrator. Nil admits no user: cachegate has no admin
	// role yet, and this is where it will be checked.
	Admin func(domain.Actor) bool
}

// mountMetrics mounts o's handler at GET /metrics. The guard treats the
// route as public (the metrics token is no access token); the handler
// then decides.
func (s *Server) mountMetrics(o *MetricsOptions) error {
	if o.Handler == nil {
		return errors.New("ginhttp: Metrics has no Handler")
	}
	token := []byte(o.Token)
	h := gin.WrapH(o.Handler)
	return s.handle(http.MethodGet, "/metrics", alwaysPublic, func(c *gin.Context) {
		if len(token) > 0 {
			if tok, err := parseBearer(c.Request.Header.Values("Authorization")); err == nil &&
				subtle.ConstantTimeCompare([]byte(tok), token) == 1 {
				h(c)
				return
			}
		}
		actor := actorFrom(c)
		switch {
		case !actor.Authenticated():
			s.writeError(c, domain.ErrUnauthenticated)
		case o.Admin != nil && o.Admin(actor):
			h(c)
		default:
			s.writeError(c, domain.ErrForbidden)
		}
	})
}
