package ginhttp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// MetricsOptions mount GET /metrics on the server (README.md, "What the
// API does"). A scrape is served to a request carrying the metrics token,
// or to an administrator; anyone else is refused (401 without valid
// credentials, 403 for a user who is not an administrator), whether guards
// are enabled or not: the metrics describe every user's traffic.
type MetricsOptions struct {
	// Handler serves the scrape (Prometheus text, or OpenMetrics when
	// asked).
	Handler http.Handler
	// Token, when not empty, admits a request with "Authorization: Bearer
	// <Token>", compared in constant time (SHA-256 digests, so not even
	// its length leaks). Empty admits no token.
	Token string
	// Admin reports whether an authenticated caller may read the metrics
	// as an administrator. Nil means the server's admin check
	// (Options.Admin: the store's admin flag, docs/admin.md), or no user
	// at all when the server has none.
	Admin func(context.Context, domain.Actor) bool
}

// mountMetrics mounts m's handler at GET /metrics, outside the guard: the
// metrics token is no access token, so the handler reads the bearer
// itself and asks the Authenticator only about one that is not the
// metrics token. Without an Admin check of its own, m takes the admin
// room's. Nil mounts nothing.
func (s *Server) mountMetrics(m *MetricsOptions, a *admin.Options) error {
	if m == nil {
		return nil
	}
	o := *m
	if o.Admin == nil && a != nil && a.Check != nil {
		check := a.Check
		o.Admin = func(ctx context.Context, a domain.Actor) bool { return check.Require(ctx, a) == nil }
	}
	if o.Handler == nil {
		return errors.New("ginhttp: Metrics has no Handler")
	}
	var want [sha256.Size]byte
	if o.Token != "" {
		want = sha256.Sum256([]byte(o.Token))
	}
	serve := gin.WrapH(o.Handler)
	return s.host.Mount(web.Route{Method: http.MethodGet, Path: "/metrics", Bare: true, Handler: s.host.Handler(func(c *gin.Context) error {
		tok, perr := parseBearer(c.Request.Header.Values("Authorization"))
		if perr != nil {
			return domain.ErrUnauthenticated
		}
		if o.Token != "" {
			got := sha256.Sum256([]byte(tok))
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
				serve(c)
				return nil
			}
		}
		if s.auth == nil {
			return domain.ErrUnauthenticated
		}
		p, err := s.auth.Authenticate(c.Request.Context(), tok)
		if err != nil {
			return err
		}
		web.SetPrincipal(c, p)
		if o.Admin == nil || !o.Admin(c.Request.Context(), domain.AsPrincipal(p)) {
			return domain.ErrForbidden
		}
		serve(c)
		return nil
	})})
}
