package ginhttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// KeySet publishes the token signing keys (GET /.well-known/jwks.json).
type KeySet interface {
	JWKS(ctx context.Context) ([]byte, error)
}

// TokenLocation is where POST /auth/refresh reads the refresh token.
type TokenLocation string

// The token locations (docs/api.md, "Authentication": --refresh-from).
const (
	FromBody   TokenLocation = "body"
	FromHeader TokenLocation = "header"
	FromCookie TokenLocation = "cookie"
	FromQuery  TokenLocation = "query"
)

// AuthOptions mount the authentication routes: POST /auth/login,
// POST /auth/refresh (also as POST /token/refresh, the route Rockets
// serves), POST /auth/logout and GET /.well-known/jwks.json.
// A nil use case leaves its route out.
type AuthOptions struct {
	Login   *application.Login
	Refresh *application.Refresh
	Logout  *application.Logout
	Keys    KeySet
	// UsernameField and PasswordField name the login body's members
	// (defaults "username" and "password").
	UsernameField string
	PasswordField string
	// RefreshFrom and RefreshName say where the refresh token is read:
	// the body member (default "refreshToken"), a header (a value of
	// "Bearer <token>" is accepted too), a cookie or a query parameter.
	RefreshFrom TokenLocation
	RefreshName string
	// Origins are the browser origins allowed to call the API (the CORS
	// origins, "https://app.example"). With RefreshFrom FromCookie, a
	// refresh from any other site's page is refused with 403 (see
	// crossSite).
	Origins []string
}

type authRoutes struct {
	s *Server
	o AuthOptions
}

func (o AuthOptions) withDefaults() (AuthOptions, error) {
	if o.UsernameField == "" {
		o.UsernameField = "username"
	}
	if o.PasswordField == "" {
		o.PasswordField = "password"
	}
	if o.UsernameField == o.PasswordField {
		return o, errors.New("ginhttp: the login username and password fields must differ")
	}
	if o.RefreshFrom == "" {
		o.RefreshFrom = FromBody
	}
	switch o.RefreshFrom {
	case FromBody, FromHeader, FromCookie, FromQuery:
	default:
		return o, errors.New("ginhttp: unknown refresh token location " + strconv.Quote(string(o.RefreshFrom)))
	}
	if o.RefreshName == "" {
		if o.RefreshFrom != FromBody {
			return o, errors.New("ginhttp: the refresh token's " + string(o.RefreshFrom) + " needs a name")
		}
		o.RefreshName = "refreshToken"
	}
	return o, nil
}

func (r *authRoutes) register() error {
	type route struct {
		method, path string
		public       accessRule
		h            gin.HandlerFunc
		on           bool
	}
	for _, rt := range []route{
		{http.MethodPost, "/auth/login", alwaysPublic, r.login, r.o.Login != nil},
		{http.MethodPost, "/auth/refresh", alwaysPublic, r.refresh, r.o.Refresh != nil},
		// The route Rockets serves and its frontends call (docs/api.md, "Coming from Rockets").
		{http.MethodPost, "/token/refresh", alwaysPublic, r.refresh, r.o.Refresh != nil},
		{http.MethodPost, "/auth/logout", neverPublic, r.logout, r.o.Logout != nil},
		{http.MethodGet, "/.well-known/jwks.json", alwaysPublic, r.jwks, r.o.Keys != nil},
	} {
		if !rt.on {
			continue
		}
		if err := r.s.handle(rt.method, rt.path, rt.public, rt.h); err != nil {
			return err
		}
	}
	return nil
}

// login answers 201 with a token pair. Every credential problem, a
// missing or empty field included, is the same 401; a member that is not a
// string is a 400 naming it.
func (r *authRoutes) login(c *gin.Context) {
	b, err := r.s.readBody(c)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	fields, err := decodeStringObject(b, r.o.UsernameField, r.o.PasswordField)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	client := clientOf(c)
	pair, err := r.o.Login.Execute(c.Request.Context(), application.LoginInput{
		Username: fields[0], Password: fields[1], ClientAddr: client.Address, UserAgent: client.UserAgent})
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	writeTokenPair(c, pair)
}

// refresh answers 201 with a new pair for a valid refresh token.
func (r *authRoutes) refresh(c *gin.Context) {
	var token string
	switch r.o.RefreshFrom {
	case FromBody:
		b, err := r.s.readOptionalBody(c)
		if err != nil {
			r.s.writeError(c, err)
			return
		}
		if isBlank(b) {
			// No body is a missing refresh token, 401 like {} and a
			// null token (as Rockets answers; README.md, "What the API does").
			break
		}
		fields, err := decodeStringObject(b, r.o.RefreshName)
		if err != nil {
			r.s.writeError(c, err)
			return
		}
		token = fields[0]
	case FromHeader:
		token = c.GetHeader(r.o.RefreshName)
		if len(token) > 7 && strings.EqualFold(token[:7], "bearer ") {
			token = strings.TrimSpace(token[7:])
		}
	case FromCookie:
		if crossSite(c.Request, r.o.Origins) {
			r.s.writeError(c, errCrossSiteRefresh)
			return
		}
		token, _ = c.Cookie(r.o.RefreshName)
	case FromQuery:
		token = c.Query(r.o.RefreshName)
	}
	if token == "" || len(token) > MaxBearerTokenLen {
		r.s.writeError(c, domain.ErrUnauthenticated)
		return
	}
	pair, err := r.o.Refresh.Execute(c.Request.Context(), token, clientOf(c))
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	writeTokenPair(c, pair)
}

// logout revokes the caller's refresh family and answers 204.
func (r *authRoutes) logout(c *gin.Context) {
	if err := r.o.Logout.Execute(c.Request.Context(), actorFrom(c)); err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// jwksCacheControl lets caches keep the key set domain.KeySetMaxAge.
var jwksCacheControl = "public, max-age=" + strconv.Itoa(int(domain.KeySetMaxAge/time.Second))

// jwks serves the public keys; caches may keep them domain.KeySetMaxAge.
func (r *authRoutes) jwks(c *gin.Context) {
	b, err := r.o.Keys.JWKS(c.Request.Context())
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Header("Cache-Control", jwksCacheControl)
	writeJSON(c, http.StatusOK, b)
}

// writeTokenPair answers 201 with the pair; token answers must not be
// cached (RFC 6749 section 5.1).
func writeTokenPair(c *gin.Context, p domain.TokenPair) {
	b := make([]byte, 0, len(p.AccessToken)+len(p.RefreshToken)+40)
	b = append(b, `{"accessToken":`...)
	b = appendString(b, p.AccessToken)
	b = append(b, `,"refreshToken":`...)
	b = appendString(b, p.RefreshToken)
	b = append(b, '}')
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusCreated, b)
}

// decodeStringObject decodes a body that must be one JSON object whose
// members are among names, each a string (or null, read as absent). It
// returns the values in the order of names; absent ones are "". Unknown
// members, non-string values and malformed JSON are 400s naming the field.
func decodeStringObject(b []byte, names ...string) ([]string, error) {
	out := make([]string, len(names))
	seen := make([]bool, len(names))
	if !utf8.Valid(b) {
		return nil, domain.InvalidField("body", "must be UTF-8 encoded")
	}
	sc := scanner{b: b}
	if c := sc.peek(); c != '{' {
		return nil, domain.InvalidField("body", "must be a JSON object, not "+kindName(c))
	}
	var errs problems
	err := sc.object(func(name string) error {
		i := indexOf(names, name)
		if i < 0 {
			errs.add(clip(name), "is not a known field")
			_, err := sc.value()
			return err
		}
		if sc.peek() == 'n' {
			if seen[i] {
				errs.add(name, "is given more than once")
			}
			seen[i] = true
			return sc.literal("null")
		}
		return stringMember(&sc, &errs, name, &seen[i], &out[i])
	})
	if err != nil {
		return nil, bodyError(err)
	}
	// Not peek() != 0: peek also answers 0 for a NUL byte.
	if sc.skipSpace(); sc.i < len(sc.b) {
		return nil, domain.InvalidField("body", "unexpected data after the JSON object at byte "+strconv.Itoa(sc.i))
	}
	if len(errs) > 0 {
		return nil, domain.Invalid(errs...)
	}
	return out, nil
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}
