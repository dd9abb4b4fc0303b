package ginhttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
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
	s           *Server
	o           AuthOptions
	loginBody   web.Table[loginBody]
	refreshBody web.Table[refreshBody]
}

// loginBody and refreshBody are the bodies of login and refresh, their
// members named by AuthOptions (the tags are the defaults). A null member
// is absent.
type loginBody struct {
	Username web.String `json:"username,nullable"`
	Password web.String `json:"password,nullable"`
}

type refreshBody struct {
	Token web.String `json:"refreshToken,nullable"`
}

var (
	loginTable   = web.NewTable[loginBody]()
	refreshTable = web.NewTable[refreshBody]()
)

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

func (r *authRoutes) register() (err error) {
	if r.loginBody, err = loginTable.Renamed(map[string]string{"username": r.o.UsernameField, "password": r.o.PasswordField}); err != nil {
		return err
	}
	if r.refreshBody, err = refreshTable.Renamed(map[string]string{"refreshToken": r.o.RefreshName}); err != nil {
		return err
	}
	type route struct {
		method, path string
		public       web.Access
		h            func(*gin.Context) error
		on           bool
	}
	for _, rt := range []route{
		{http.MethodPost, "/auth/login", web.Public, r.login, r.o.Login != nil},
		{http.MethodPost, "/auth/refresh", web.Public, r.refresh, r.o.Refresh != nil},
		// The route Rockets serves and its frontends call (docs/api.md, "Coming from Rockets").
		{http.MethodPost, "/token/refresh", web.Public, r.refresh, r.o.Refresh != nil},
		{http.MethodPost, "/auth/logout", web.Private, r.logout, r.o.Logout != nil},
		{http.MethodGet, "/.well-known/jwks.json", web.Public, r.jwks, r.o.Keys != nil},
	} {
		if !rt.on {
			continue
		}
		if err := r.s.host.Mount(web.Route{Method: rt.method, Path: rt.path, Access: rt.public, Handler: r.s.host.Handler(rt.h)}); err != nil {
			return err
		}
	}
	return nil
}

// login answers 201 with a token pair. Every credential problem, a
// missing or empty field included, is the same 401; a member that is not a
// string is a 400 naming it.
func (r *authRoutes) login(c *gin.Context) error {
	body, err := web.Decode(r.s.host, c, r.loginBody)
	if err != nil {
		return err
	}
	client := web.Client(c)
	pair, err := r.o.Login.Execute(c.Request.Context(), application.LoginInput{
		Username: body.Username.Value, Password: body.Password.Value, ClientAddr: client.Address, UserAgent: client.UserAgent})
	if err != nil {
		return err
	}
	writeTokenPair(c, pair)
	return nil
}

// refresh answers 201 with a new pair for a valid refresh token.
func (r *authRoutes) refresh(c *gin.Context) error {
	var token string
	switch r.o.RefreshFrom {
	case FromBody:
		b, err := web.ReadOptionalBody(c, r.s.bodyLimit)
		if err != nil {
			return err
		}
		if web.IsBlank(b) {
			// No body is a missing refresh token, 401 like {} and a
			// null token (as Rockets answers; README.md, "What the API does").
			break
		}
		body, err := r.refreshBody.Decode(b)
		if err != nil {
			return err
		}
		token = body.Token.Value
	case FromHeader:
		token = c.GetHeader(r.o.RefreshName)
		if len(token) > 7 && strings.EqualFold(token[:7], "bearer ") {
			token = strings.TrimSpace(token[7:])
		}
	case FromCookie:
		if crossSite(c.Request, r.o.Origins) {
			return errCrossSiteRefresh
		}
		token, _ = c.Cookie(r.o.RefreshName)
	case FromQuery:
		token = c.Query(r.o.RefreshName)
	}
	if token == "" || len(token) > MaxBearerTokenLen {
		return domain.ErrUnauthenticated
	}
	pair, err := r.o.Refresh.Execute(c.Request.Context(), token, web.Client(c))
	if err != nil {
		return err
	}
	writeTokenPair(c, pair)
	return nil
}

// logout revokes the caller's refresh family and answers 204.
func (r *authRoutes) logout(c *gin.Context) error {
	if err := r.o.Logout.Execute(c.Request.Context(), web.Actor(c)); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// jwksCacheControl lets caches keep the key set domain.KeySetMaxAge.
var jwksCacheControl = "public, max-age=" + strconv.Itoa(int(domain.KeySetMaxAge/time.Second))

// jwks serves the public keys; caches may keep them domain.KeySetMaxAge.
func (r *authRoutes) jwks(c *gin.Context) error {
	b, err := r.o.Keys.JWKS(c.Request.Context())
	if err != nil {
		return err
	}
	c.Header("Cache-Control", jwksCacheControl)
	web.WriteJSON(c, http.StatusOK, b)
	return nil
}

// writeTokenPair answers 201 with the pair; token answers must not be
// cached (RFC 6749 section 5.1).
func writeTokenPair(c *gin.Context, p domain.TokenPair) {
	b := make([]byte, 0, len(p.AccessToken)+len(p.RefreshToken)+40)
	b = append(b, `{"accessToken":`...)
	b = web.AppendString(b, p.AccessToken)
	b = append(b, `,"refreshToken":`...)
	b = web.AppendString(b, p.RefreshToken)
	b = append(b, '}')
	c.Header("Cache-Control", "no-store")
	web.WriteJSON(c, http.StatusCreated, b)
}
