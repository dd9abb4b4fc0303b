package ginhttp

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// Authenticator verifies a bearer access token and returns its principal.
// It is the port the guard consumes. It returns an error of kind
// domain.KindUnauthenticated (e.g. domain.ErrUnauthenticated) for a token
// that is missing its signature, expired, wrongly signed or not an access
// token, domain.ErrAccessTokenFailedValidation when an integrator's extra
// validation refused a verified token (answered 400), and any other error
// for an infrastructure failure (answered 500 and logged).
type Authenticator interface {
	Authenticate(ctx context.Context, bearerToken string) (domain.Principal, error)
}

// MaxBearerTokenLen bounds the token of an Authorization header; a longer
// header is malformed.
const MaxBearerTokenLen = 8 << 10

var (
	errNoBearer        = errors.New("no bearer token")
	errMalformedBearer = errors.New("malformed Authorization header")
)

// parseBearer extracts the token of "Authorization: Bearer <token>". The
// scheme is case-insensitive; one or more spaces separate it from the
// token, which must be a non-empty RFC 7235 token68 of at most
// MaxBearerTokenLen bytes. A missing header is errNoBearer; an empty,
// repeated or otherwise malformed one is errMalformedBearer.
func parseBearer(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", errNoBearer
	case 1:
	default:
		return "", errMalformedBearer
	}
	const scheme = "bearer "
	v := values[0]
	if len(v) < len(scheme) || len(v) > len(scheme)+MaxBearerTokenLen+16 || !strings.EqualFold(v[:len(scheme)], scheme) {
		return "", errMalformedBearer
	}
	tok := strings.TrimLeft(v[len(scheme):], " ")
	// token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
	body := strings.TrimRight(tok, "=")
	if body == "" || len(tok) > MaxBearerTokenLen {
		return "", errMalformedBearer
	}
	for i := 0; i < len(body); i++ {
		if !isToken68(body[i]) {
			return "", errMalformedBearer
		}
	}
	return tok, nil
}

func isToken68(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}

// CurrentUser returns the principal the guard authenticated for r, for
// integrators' own handlers registered with Server.Handle. It reports
// false for an anonymous request.
func CurrentUser(r *http.Request) (domain.Principal, bool) { return web.CurrentUser(r) }

// guard authenticates the caller of one route; it is installed only with
// an Authenticator. On a public route a valid token identifies the caller
// and any other is ignored, so a stale header never locks anyone out of
// login or health checks. Elsewhere a presented token must be well formed
// and valid (the Authenticator's errors go through the error table); a
// missing one is 401 with guards enabled, else the caller is anonymous and
// the use case applies the assignment's policy. A known caller whose
// budget of database time is spent is refused (limits.Caps.CheckBudget).
func (s *Server) guard(public web.Access) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.identify(c, public); !c.IsAborted() {
			s.caps.CheckBudget(c)
		}
	}
}

// identify is the guard's authentication, without the budget.
func (s *Server) identify(c *gin.Context, public web.Access) {
	tok, perr := parseBearer(c.Request.Header.Values("Authorization"))
	if public(c) {
		if perr == nil {
			if p, err := s.auth.Authenticate(c.Request.Context(), tok); err == nil {
				web.SetPrincipal(c, p)
			}
		}
		return
	}
	switch {
	case errors.Is(perr, errNoBearer) && !s.guards:
		return
	case perr != nil:
		s.errs.Fail(c, domain.ErrUnauthenticated)
		return
	}
	p, err := s.auth.Authenticate(c.Request.Context(), tok)
	if err != nil {
		s.errs.Fail(c, err)
		return
	}
	web.SetPrincipal(c, p)
}
