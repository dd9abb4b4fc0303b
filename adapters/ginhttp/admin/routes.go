// Package admin is the admin room of the HTTP adapter: the admin API
// under /admin, the self-service routes /auth/sessions and /auth/password
// and the first admin's set-up route /auth/setup (docs/admin.md), with
// their JSON and time encoding.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// Options mount the admin API under /admin and the self-service
// routes /auth/sessions and /auth/password (docs/admin.md). Check is
// required; a nil use case leaves its routes out.
type Options struct {
	Check *application.AdminCheck
	Users *application.Users
	Audit *application.AuditTrail
	Keys  *application.Keys
	Self  *application.SelfService
	// Entries are the admin API's routes on one entry of any assignee
	// (entries.go); they also need the cache routes.
	Entries *application.AdminEntries
	// AuditPoll is how often a live audit stream reads the trail; zero
	// means 500 ms.
	AuditPoll time.Duration
}

// Cache is what the admin room borrows from the cache API's room: the
// list, the entry bodies and preconditions, and the entry answers of
// /cache/<assignment>. Its errors are for the caller to answer.
type Cache interface {
	// ListAs answers the cache list of assignment as actor.
	ListAs(c *gin.Context, assignment string, actor domain.Actor) error
	// Assignment returns the route's assignment, or a 404 error.
	Assignment(c *gin.Context) (string, error)
	// Input reads a cache body (PUT).
	Input(c *gin.Context) (application.CacheInput, error)
	// Preconditions reads If-Match and If-None-Match, resolved as actor.
	Preconditions(c *gin.Context, assignment string, actor domain.Actor) (application.Preconditions, error)
	// Answer answers one entry with its ETag, or returns err.
	Answer(c *gin.Context, status int, e domain.Entry, err error) error
}

// Stream is how an audit stream paces itself, as the change feed's
// streams do (ginhttp.StreamOptions, its defaults applied).
type Stream struct {
	Heartbeat, Retry, WriteTimeout time.Duration
	// Recheck re-authorises the caller at now; nil is none.
	Recheck func(ctx context.Context, p domain.Principal, now time.Time) error
}

// Deps are what the admin room borrows from the server.
type Deps struct {
	Host *web.Host
	Caps *limits.Caps
	// Cache is nil when the server serves no cache routes.
	Cache  Cache
	Stream Stream
	// Shutdown is done when the server shuts down: open audit streams
	// end.
	Shutdown context.Context
	Log      *slog.Logger
}

type routes struct {
	s     *Deps
	o     Options
	cache Cache
}

// Mount mounts the routes of o (docs/admin.md). It fails without the
// admin check or an authenticating server.
func Mount(o Options, d Deps) error {
	r := &routes{s: &d, o: o, cache: d.Cache}
	return r.register()
}

// adminRoute is one route of the admin API (admins only) or of
// self-service (self: any signed-in user).
type adminRoute struct {
	method, path     string
	h                func(*gin.Context) error
	on, stream, self bool
}

// list is every route Options can mount.
func (r *routes) list() []adminRoute {
	o := r.o
	return []adminRoute{
		{method: http.MethodGet, path: "/admin/users", h: r.listUsers, on: o.Users != nil},
		{method: http.MethodPost, path: "/admin/users", h: r.addUser, on: o.Users != nil},
		{method: http.MethodGet, path: "/admin/users/:id", h: r.getUser, on: o.Users != nil},
		{method: http.MethodPatch, path: "/admin/users/:id", h: r.patchUser, on: o.Users != nil},
		{method: http.MethodDelete, path: "/admin/users/:id", h: r.deleteUser, on: o.Users != nil},
		{method: http.MethodPut, path: "/admin/users/:id/password", h: r.setPassword, on: o.Users != nil},
		{method: http.MethodGet, path: "/admin/users/:id/sessions", h: r.userSessions, on: o.Users != nil},
		{method: http.MethodDelete, path: "/admin/users/:id/sessions", h: r.revokeUserSessions, on: o.Users != nil},
		{method: http.MethodDelete, path: "/admin/sessions/:sid", h: r.revokeSession, on: o.Users != nil},
		{method: http.MethodGet, path: "/admin/audit", h: r.auditPage, on: o.Audit != nil},
		{method: http.MethodGet, path: "/admin/audit/events", h: r.auditEvents, on: o.Audit != nil, stream: true},
		{method: http.MethodGet, path: "/admin/keys", h: r.listKeys, on: o.Keys != nil},
		{method: http.MethodPost, path: "/admin/keys/rotate", h: r.rotateKey, on: o.Keys != nil},
		{method: http.MethodPost, path: "/admin/keys/:kid/revoke", h: r.revokeKey, on: o.Keys != nil},
		{method: http.MethodGet, path: "/admin/cache/:assignment", h: r.onAssignment(r.listEntries), on: r.cache != nil},
		{method: http.MethodGet, path: "/admin/sessions", h: r.allSessions, on: o.Users != nil},
		{method: http.MethodGet, path: "/admin/cache/:assignment/:id", h: r.onAssignment(r.getEntry), on: r.cache != nil && o.Entries != nil},
		{method: http.MethodPut, path: "/admin/cache/:assignment/:id", h: r.onAssignment(r.replaceEntry), on: r.cache != nil && o.Entries != nil},
		{method: http.MethodDelete, path: "/admin/cache/:assignment/:id", h: r.onAssignment(r.deleteEntry), on: r.cache != nil && o.Entries != nil},
		{method: http.MethodGet, path: "/auth/sessions", h: r.mySessions, on: o.Self != nil, self: true},
		{method: http.MethodDelete, path: "/auth/sessions/:id", h: r.revokeMySession, on: o.Self != nil, self: true},
		{method: http.MethodPost, path: "/auth/password", h: r.changePassword, on: o.Self != nil, self: true},
	}
}

func (r *routes) register() error {
	if r.o.Check == nil {
		return errors.New("ginhttp: the admin routes need the admin check")
	}
	if !r.s.Host.HasAuth {
		return errors.New("ginhttp: the admin routes need an Authenticator")
	}
	for _, rt := range r.list() {
		if !rt.on {
			continue
		}
		err := r.s.Host.Mount(web.Route{Method: rt.method, Path: rt.path, Access: web.Private, Stream: rt.stream,
			Handler: r.handler(rt), Pre: []gin.HandlerFunc{setNoStore}})
		if err != nil {
			return err
		}
	}
	return nil
}

// handler makes rt.h the route's handler (web.Host.Handler). An admin
// route answers 403 to a user who is not an admin now (AdminCheck asks
// the store, not the token), before anything of the request is read; the
// guard before it answered 401 to an anonymous caller.
func (r *routes) handler(rt adminRoute) gin.HandlerFunc {
	return r.s.Host.Handler(func(c *gin.Context) error {
		if !rt.self {
			if err := r.o.Check.Require(c.Request.Context(), web.Actor(c)); err != nil {
				return err
			}
		}
		return rt.h(c)
	})
}

// done answers 204 No Content, or returns err.
func done(c *gin.Context, err error) error {
	if err == nil {
		c.Status(http.StatusNoContent)
	}
	return err
}

// setNoStore marks every answer of the admin and self-service routes
// Cache-Control: no-store, the guard's 401 included: it runs before the
// guard.
func setNoStore(c *gin.Context) { c.Header("Cache-Control", "no-store") }

// The bodies of the admin API and of self-service (openapi.json): no
// member of these is nullable; passwords may hold any character.
type (
	addUserBody struct {
		Username web.String `json:"username"`
		Password web.String `json:"password,secret"`
		Admin    web.Bool   `json:"admin"`
	}
	patchUserBody struct {
		Active web.Bool `json:"active"`
		Admin  web.Bool `json:"admin"`
	}
	passwordBody struct {
		Password web.String `json:"password,secret"`
	}
	changePasswordBody struct {
		CurrentPassword web.String `json:"currentPassword,secret"`
		NewPassword     web.String `json:"newPassword,secret"`
	}
	rotateBody struct {
		Now web.Bool `json:"now"`
	}
)

var (
	addUserTable        = web.NewTable[addUserBody]()
	patchUserTable      = web.NewTable[patchUserBody]()
	passwordTable       = web.NewTable[passwordBody]()
	changePasswordTable = web.NewTable[changePasswordBody]()
	rotateTable         = web.NewTable[rotateBody]()
)

// writeAdminJSON answers status with v encoded, or returns the encoding's
// error.
func writeAdminJSON(c *gin.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err == nil {
		web.WriteJSON(c, status, b)
	}
	return err
}

// jsonTime is a time as the API prints it: RFC 3339 in UTC with three
// fractional digits; the zero time is null.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return web.AppendTime(nil, time.Time(t)), nil
}

func timePtr(t *time.Time) jsonTime {
	if t == nil {
		return jsonTime{}
	}
	return jsonTime(*t)
}
