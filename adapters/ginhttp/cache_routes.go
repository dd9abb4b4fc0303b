package ginhttp

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// cacheRoutes serves /cache/:assignment and /cache/:assignment/:id.
type cacheRoutes struct {
	s  *Server
	uc *application.CacheOperations
	// public tells, per assignment name served over HTTP, whether its
	// policy is public. Entity keys, which the Go API also accepts, are
	// not routes.
	public map[string]bool
}

func newCacheRoutes(s *Server, uc *application.CacheOperations) (*cacheRoutes, error) {
	r := &cacheRoutes{s: s, uc: uc, public: map[string]bool{}}
	for _, name := range uc.Assignments.Names() {
		st, err := uc.Assignments.Lookup(name)
		if err != nil {
			return nil, err
		}
		r.public[name] = st.Policy == domain.PolicyPublic
	}
	return r, nil
}

func (r *cacheRoutes) register() error {
	const coll, item = "/cache/:assignment", "/cache/:assignment/:id"
	for _, rt := range []web.Route{
		{Method: http.MethodPost, Path: coll, Handler: r.handle(r.create)},
		{Method: http.MethodGet, Path: coll, Handler: r.handle(r.list)},
		// The same collection with a trailing slash, as Rockets' own
		// specs call it: answered alike, not redirected (README.md,
		// "What the API does"). Gin's RedirectTrailingSlash is off (server.go).
		{Method: http.MethodPost, Path: coll + "/", Handler: r.handle(r.create)},
		{Method: http.MethodGet, Path: coll + "/", Handler: r.handle(r.list)},
		{Method: http.MethodGet, Path: item, Handler: r.handle(r.get)},
		{Method: http.MethodPut, Path: item, Handler: r.handle(r.replace)},
		{Method: http.MethodPatch, Path: item, Handler: r.handle(r.patch)},
		{Method: http.MethodDelete, Path: item, Handler: r.handle(r.delete)},
	} {
		rt.Access = r.isPublic
		if err := r.s.host.Mount(rt); err != nil {
			return err
		}
	}
	if r.uc.Watch == nil || !r.uc.Watch.Available() {
		return nil
	}
	return r.s.host.Mount(web.Route{Method: http.MethodGet, Path: coll + "/events", Access: r.isPublic, Handler: r.handle(r.events), Stream: true})
}

// isPublic is the guard's access rule for cache routes: public
// assignments need no token. An unknown assignment also passes the guard,
// so it answers 404 like any unknown route, whoever asks.
func (r *cacheRoutes) isPublic(c *gin.Context) bool {
	pub, known := r.public[c.Param("assignment")]
	return pub || !known
}

// Assignment returns the route's assignment, or ErrUnknownAssignment
// (404).
func (r *cacheRoutes) Assignment(c *gin.Context) (string, error) {
	a := c.Param("assignment")
	if _, ok := r.public[a]; !ok {
		return "", domain.ErrUnknownAssignment
	}
	return a, nil
}

// handle makes h a route's handler (web.Host.Handler), run for the
// route's assignment.
func (r *cacheRoutes) handle(h func(c *gin.Context, a string) error) gin.HandlerFunc {
	return r.s.host.Handler(func(c *gin.Context) error {
		a, err := r.Assignment(c)
		if err != nil {
			return err
		}
		return h(c, a)
	})
}

func (r *cacheRoutes) create(c *gin.Context, a string) error {
	idem, err := idempotencyKey(c.Request.Header)
	if err != nil {
		return err
	}
	in, body, err := cacheInput(r, c, toCacheInput)
	if err != nil {
		return err
	}
	if idem != nil {
		// A retry is the same request when its body has the same bytes
		// (README, "Idempotent retries").
		idem.RequestHash = bodyHash(body)
	}
	e, err := r.uc.Create.Execute(c.Request.Context(), application.CreateCacheInput{
		Assignment: a, Actor: web.Actor(c), Cache: in, Idempotency: idem})
	if err != nil {
		return err
	}
	c.Writer.Header()["Location"] = []string{strings.TrimSuffix(c.Request.URL.EscapedPath(), "/") + "/" + e.ID}
	writeEntry(c, http.StatusCreated, &e)
	return nil
}

// list streams the matching entries the caller may see (see listStream).
func (r *cacheRoutes) list(c *gin.Context, a string) error { return r.ListAs(c, a, web.Actor(c)) }

// ListAs is list run as actor: the caller, or the system actor for the
// admin API's list of every assignee (admin.Cache).
func (r *cacheRoutes) ListAs(c *gin.Context, a string, actor domain.Actor) error {
	held, ok := r.s.caps.List(c)
	if !ok {
		return nil
	}
	defer held.Release()
	def, max := r.uc.List.Limits()
	q, err := toListInput(c.Request.URL.RawQuery, def, max)
	if err != nil {
		return err
	}
	in := q.in
	in.Assignment, in.Actor = a, actor
	bp := web.GetBuf()
	defer web.PutBuf(bp)
	w := &listStream{c: c, buf: bp, paged: q.paged, fields: q.fields}
	out, err := r.uc.List.Stream(c.Request.Context(), in, w.entry)
	if err != nil {
		return r.failList(w, err)
	}
	w.finish(out.Total, q.page, out.Limit)
	return nil
}

func (r *cacheRoutes) get(c *gin.Context, a string) error {
	e, err := r.uc.Get.Execute(c.Request.Context(), application.GetCacheInput{
		Assignment: a, Actor: web.Actor(c), ID: c.Param("id")})
	if err != nil {
		return err
	}
	if inm := parseEntityTags(c.Request.Header, "If-None-Match"); inm.present && inm.matchesWeak(e.Version) {
		c.Writer.Header()["Etag"] = []string{etag(e.Version)}
		c.Status(http.StatusNotModified)
		return nil
	}
	writeEntry(c, http.StatusOK, &e)
	return nil
}

func (r *cacheRoutes) replace(c *gin.Context, a string) error {
	in, err := r.Input(c)
	if err != nil {
		return err
	}
	pre, err := r.Preconditions(c, a, web.Actor(c))
	if err != nil {
		return err
	}
	e, created, err := r.uc.Replace.Execute(c.Request.Context(), application.ReplaceCacheInput{
		Assignment: a, Actor: web.Actor(c), ID: c.Param("id"), Cache: in, Pre: pre})
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return r.Answer(c, status, e, err)
}

func (r *cacheRoutes) patch(c *gin.Context, a string) error {
	p, _, err := cacheInput(r, c, toCachePatch)
	if err != nil {
		return err
	}
	pre, err := r.Preconditions(c, a, web.Actor(c))
	if err != nil {
		return err
	}
	e, err := r.uc.Patch.Execute(c.Request.Context(), application.PatchCacheInput{
		Assignment: a, Actor: web.Actor(c), ID: c.Param("id"), Patch: p, Pre: pre})
	return r.Answer(c, http.StatusOK, e, err)
}

// delete answers 200 with the entry as deleted (dateDeleted set), so a
// client learns what it removed, as the CRUD modules do.
func (r *cacheRoutes) delete(c *gin.Context, a string) error {
	pre, err := r.Preconditions(c, a, web.Actor(c))
	if err != nil {
		return err
	}
	e, err := r.uc.Delete.Execute(c.Request.Context(), application.DeleteCacheInput{
		Assignment: a, Actor: web.Actor(c), ID: c.Param("id"), Pre: pre})
	return r.Answer(c, http.StatusOK, e, err)
}

// Input reads and converts the POST and PUT body.
func (r *cacheRoutes) Input(c *gin.Context) (application.CacheInput, error) {
	in, _, err := cacheInput(r, c, toCacheInput)
	return in, err
}

// cacheInput reads the request's cache body and converts it with conv; it
// also returns the body as received.
func cacheInput[T any](r *cacheRoutes, c *gin.Context, conv func(cacheBody) (T, error)) (T, []byte, error) {
	body, err := web.ReadBody(c, r.s.bodyLimit)
	if err == nil {
		var dto cacheBody
		if dto, err = cacheBodyTable.Decode(body); err == nil {
			in, err := conv(dto)
			return in, body, err
		}
	}
	var zero T
	return zero, nil, err
}

// Preconditions converts If-Match and If-None-Match into the use case's
// preconditions (docs/api.md, "Conditional requests"). One strong tag is
// checked atomically by the use case; "*" or a list is resolved against
// the current version, read as actor (the caller, or the system actor for
// admin.Cache), which is then required exactly, so a concurrent change
// still fails with 412.
func (r *cacheRoutes) Preconditions(c *gin.Context, a string, actor domain.Actor) (application.Preconditions, error) {
	var pre application.Preconditions
	method := c.Request.Method
	im := parseEntityTags(c.Request.Header, "If-Match")
	if inm := parseEntityTags(c.Request.Header, "If-None-Match"); inm.present {
		if method != http.MethodPut || !inm.any || len(inm.strong)+len(inm.weak) > 0 {
			return pre, errIfNoneMatch(method)
		}
		if im.present {
			// "exists with this version" and "does not exist" cannot
			// both hold.
			return pre, domain.ErrVersionMismatch
		}
		pre.IfNoneMatchAny = true
		return pre, nil
	}
	if !im.present {
		return pre, nil
	}
	if v, ok := im.single(); ok {
		pre.IfMatch = &v
		return pre, nil
	}
	if !im.any && len(im.strong) == 0 {
		return pre, domain.ErrVersionMismatch
	}
	cur, err := r.uc.Get.Execute(c.Request.Context(), application.GetCacheInput{
		Assignment: a, Actor: actor, ID: c.Param("id")})
	switch {
	case errors.Is(err, domain.ErrCacheNotFound) && method == http.MethodPut:
		// As with a single tag, PUT with If-Match never creates.
		return pre, domain.ErrVersionMismatch
	case err != nil:
		return pre, err
	case !im.matchesStrong(cur.Version):
		return pre, domain.ErrVersionMismatch
	}
	pre.IfMatch = &cur.Version
	return pre, nil
}
