package web

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

// Access tells the guard whether the matched route is public.
type Access func(*gin.Context) bool

// Public and Private are the fixed access rules.
func Public(*gin.Context) bool  { return true }
func Private(*gin.Context) bool { return false }

// PublicIf is Public when public holds, else Private.
func PublicIf(public bool) Access {
	if public {
		return Public
	}
	return Private
}

// Route is one route of a room.
type Route struct {
	Method, Path string
	Access       Access
	// Stream lets the token come from the access_token query parameter
	// (an EventSource cannot send headers).
	Stream bool
	// Pre runs before the guard, so it also shapes the guard's refusals.
	Pre     []gin.HandlerFunc
	Handler gin.HandlerFunc
	// Bare mounts Handler alone: no guard, no Pre (the console's files).
	Bare bool
}

// Router mounts a room's routes behind the server's middleware and guard.
// Mount fails for a route that clashes with another.
type Router interface {
	Mount(Route) error
}

// Host is what the server lends every room: its router, its error writer
// and its body limit.
type Host struct {
	Router
	Errors    *Errors
	BodyLimit int64
	// HasAuth tells whether the server authenticates callers.
	HasAuth bool
}

// Fail answers err in the error envelope and stops the handler chain.
func (h *Host) Fail(c *gin.Context, err error) { h.Errors.Fail(c, err) }

// Handler makes f a route's handler: the error f returns is answered
// (Fail). f returns nil once it answered itself.
func (h *Host) Handler(f func(*gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := f(c); err != nil {
			h.Fail(c, err)
		}
	}
}

// Decode reads the request's body and decodes it by t.
func Decode[T any](h *Host, c *gin.Context, t Table[T]) (T, error) {
	b, err := ReadBody(c, h.BodyLimit)
	if err != nil {
		var zero T
		return zero, err
	}
	return t.Decode(b)
}

// principalKey keys the authenticated principal in a request's context.
type principalKey struct{}

// CurrentUser returns the principal the guard authenticated for r; false
// for an anonymous request.
func CurrentUser(r *http.Request) (domain.Principal, bool) {
	p, ok := r.Context().Value(principalKey{}).(domain.Principal)
	return p, ok
}

// Actor is the one place handlers learn who calls: the principal the
// guard stored, or domain.Anonymous(), from the request's client. An
// HTTP caller is never the trusted system actor.
func Actor(c *gin.Context) domain.Actor {
	if p, ok := CurrentUser(c.Request); ok {
		return domain.AsPrincipal(p).From(Client(c))
	}
	return domain.Anonymous().From(Client(c))
}

// clientKey is the gin context key of the request's domain.Client.
const clientKey = "cachegate.client"

// SetClient records the request's client (the request id middleware).
func SetClient(c *gin.Context, client domain.Client) { c.Set(clientKey, client) }

// Client returns the request's client, as SetClient recorded it.
func Client(c *gin.Context) domain.Client {
	client, _ := c.Get(clientKey)
	cl, _ := client.(domain.Client)
	return cl
}

// SetPrincipal stores the authenticated principal.
func SetPrincipal(c *gin.Context, p domain.Principal) {
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), principalKey{}, p))
}
