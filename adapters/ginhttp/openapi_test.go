package ginhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/prom"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// oasLoad parses the embedded document.
func oasLoad(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument())
	if err != nil {
		t.Fatalf("load the OpenAPI document: %v", err)
	}
	return doc
}

// routeSpec is one mounted route as the OpenAPI document names it: an
// upper-case method and a path with {param} placeholders.
type routeSpec struct {
	Method string
	Path   string
}

// mountedRoutes lists the routes the engine serves, sorted, with Gin's
// ":param" segments written as OpenAPI's "{param}". Tests compare it with
// the document's paths.
func (s *Server) mountedRoutes() []routeSpec {
	infos := s.engine.Routes()
	out := make([]routeSpec, 0, len(infos))
	for _, ri := range infos {
		segs := strings.Split(ri.Path, "/")
		for i, seg := range segs {
			if name, ok := strings.CutPrefix(seg, ":"); ok {
				segs[i] = "{" + name + "}"
			}
		}
		out = append(out, routeSpec{Method: strings.ToUpper(ri.Method), Path: strings.Join(segs, "/")})
	}
	slices.SortFunc(out, func(a, b routeSpec) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// oasDocumentedRoutes lists the document's operations as routeSpecs, sorted
// like mountedRoutes.
func oasDocumentedRoutes(doc *openapi3.T) []routeSpec {
	var out []routeSpec
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, routeSpec{Method: method, Path: path})
		}
	}
	slices.SortFunc(out, func(a, b routeSpec) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

func TestOpenAPIDocumentIsAValidOpenAPI3Document(t *testing.T) {
	t.Parallel()
	doc := oasLoad(t)
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document does not validate: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	errorSchema := doc.Components.Schemas["Error"].Value
	ids := map[string]string{}
	for _, r := range oasDocumentedRoutes(doc) {
		op := doc.Paths.Value(r.Path).GetOperation(r.Method)
		name := r.Method + " " + r.Path
		t.Run(name+" is documented completely", func(t *testing.T) {
			t.Parallel()
			if op.Responses.Status(http.StatusInternalServerError) == nil {
				t.Error("no 500 answer: any route may fail internally")
			}
			if op.Responses.Default() != nil {
				t.Error("a default answer would hide undocumented statuses")
			}
			for code, ref := range op.Responses.Map() {
				resp := ref.Value
				if resp.Headers["X-Request-Id"] == nil {
					t.Errorf("answer %s does not document X-Request-Id", code)
				}
				if code[0] != '4' && code[0] != '5' {
					continue
				}
				mt := resp.Content.Get("application/json")
				if mt == nil || mt.Schema == nil || mt.Schema.Value != errorSchema {
					t.Errorf("error answer %s is not the Error envelope", code)
				}
				if code == "401" && resp.Headers["WWW-Authenticate"] == nil {
					t.Error("401 does not document WWW-Authenticate")
				}
				if code == "429" && resp.Headers["Retry-After"] == nil {
					t.Error("429 does not document Retry-After")
				}
			}
		})
		if prev, dup := ids[op.OperationID]; dup || op.OperationID == "" {
			t.Errorf("%s: operationId %q is empty or also used by %s", name, op.OperationID, prev)
		}
		ids[op.OperationID] = name
	}
}

// oasAuth wraps the Authenticate use case as the guard's Authenticator.
type oasAuth struct{ uc *application.Authenticate }

func (a oasAuth) Authenticate(ctx context.Context, tok string) (domain.Principal, error) {
	return a.uc.Execute(ctx, tok)
}

// oasPinger is a readiness check with a fixed answer.
type oasPinger struct{ err error }

func (p oasPinger) Ping(context.Context) error { return p.err }

// The credentials of the test user; never printed.
const (
	oasUsername = "alice"
	oasPassword = "correct horse battery staple"
)

// oasStack is a server with every option on: cache use cases on memstore
// (assignment "user", owner policy, and "open", public), the real auth use
// cases (josejwt EdDSA, bcrypt at its lowest cost, memstore), guards,
// readiness, metrics as an extra guarded route and a small body limit.
type oasStack struct {
	server *Server
	userID string
	// users administers the stack's users (the admin API's tests add an
	// admin).
	users *application.Users
}

// oasMetricsToken is the stack's metrics token.
const oasMetricsToken = "oas-metrics-token-0123456789"

func newOASStack(t *testing.T, ready Pinger) *oasStack {
	t.Helper()
	ctx := context.Background()
	clock, ids := system.Clock{}, system.UUIDv7{}
	feed, repo := oasFeed(t, clock)
	stores, err := application.NewAssignments(
		application.Assignment{Name: "user", EntityKey: "userCache", Table: "user_cache", Repo: repo("user_cache"), Policy: domain.PolicyOwner},
		application.Assignment{Name: "open", EntityKey: "openCache", Table: "open_cache", Repo: repo("open_cache"), Policy: domain.PolicyPublic,
			Quota: domain.Quota{MaxEntries: 1}},
	)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: ids, Feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	refreshStore := memstore.NewRefreshStore(nil)
	users := memstore.NewUserRepository(nil, refreshStore)
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := josejwt.New(ctx, josejwt.Options{Keys: memstore.NewKeyStore(nil), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	lookup := application.RepoUserLookup{Users: users}
	validator, err := application.NewCredentialValidator(ctx, lookup, hasher, hasher)
	if err != nil {
		t.Fatal(err)
	}
	mint := application.TokenDeps{Issuer: tokens.Issuer(), Refresh: refreshStore, Clock: clock, IDs: ids}
	login, err := application.NewLogin(application.LoginDeps{Validator: validator, Tokens: mint,
		Throttle: memstore.NewLoginThrottle(), Limits: application.ThrottleLimits{PerUsername: 2, PerAddress: 1000, Window: time.Hour},
		Users: users, Hasher: hasher})
	if err != nil {
		t.Fatal(err)
	}
	refresh, err := application.NewRefresh(application.RefreshDeps{Verifier: tokens.Verifier(), Lookup: lookup, Tokens: mint})
	if err != nil {
		t.Fatal(err)
	}
	logout, err := application.NewLogout(refreshStore, clock, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	authn, err := application.NewAuthenticate(tokens.Verifier(), nil, lookup, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	userAdmin, check := testUsers(t, users, hasher, clock, ids, refreshStore)
	u, err := userAdmin.Add(ctx, domain.System(), application.AddUserInput{Username: oasUsername, Password: oasPassword, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := prom.New(prom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	adminOpts := oasAdmin(t, userAdmin, check, login, refreshStore, tokens)
	if adminOpts.Entries, err = application.NewAdminEntries(cache, adminOpts.Users); err != nil {
		t.Fatal(err)
	}
	setup, err := application.NewFirstAdmin(userAdmin, adminOpts.Users.HasAdmin, clock, system.Secrets{}, application.FirstAdminOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Admin:         adminOpts,
		Cache:         cache,
		BodyLimit:     4 << 10,
		Authenticator: oasAuth{authn},
		EnableGuards:  true,
		Ready:         ready,
		Observer:      metrics,
		Metrics:       &MetricsOptions{Handler: metrics.Handler(), Token: oasMetricsToken},
		Auth:          &AuthOptions{Login: login, Refresh: refresh, Logout: logout, Keys: tokens},
		Console:       true,
		Setup:         &admin.SetupOptions{Link: setup},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &oasStack{server: srv, userID: u.ID, users: userAdmin}
}

func TestOpenAPIDocumentListsExactlyTheMountedRoutes(t *testing.T) {
	t.Parallel()
	documented := oasDocumentedRoutes(oasLoad(t))
	bare, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		server *Server
		// exact requires documented == mounted; otherwise mounted must
		// be a part of documented.
		exact bool
	}{
		{"a server with every option on mounts every documented route and no other", newOASStack(t, nil).server, true},
		{"a server without options mounts only documented routes", bare, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mounted []routeSpec
			all := withoutConsole(t, tc.server.mountedRoutes(), tc.exact)
			for _, r := range all {
				// A collection's trailing-slash alias is documented in the
				// collection's description (README.md, "What the API does"), not as a
				// path of its own.
				if strings.HasSuffix(r.Path, "/") &&
					slices.Contains(all, routeSpec{Method: r.Method, Path: strings.TrimSuffix(r.Path, "/")}) {
					continue
				}
				mounted = append(mounted, r)
			}
			for _, r := range mounted {
				if !slices.Contains(documented, r) {
					t.Errorf("%s %s is served but not documented", r.Method, r.Path)
				}
			}
			if !tc.exact {
				return
			}
			for _, r := range documented {
				if !slices.Contains(mounted, r) {
					t.Errorf("%s %s is documented but not served", r.Method, r.Path)
				}
			}
		})
	}
}

// withoutConsole drops the console's routes (GET /console and
// /console/*file): static files, not API operations, so the document
// leaves them out (README, "Web console"). When want, they must be there.
func withoutConsole(t *testing.T, routes []routeSpec, want bool) []routeSpec {
	t.Helper()
	out := routes[:0:0]
	dropped := 0
	for _, r := range routes {
		if r.Path == strings.TrimSuffix(ConsolePath, "/") || strings.HasPrefix(r.Path, ConsolePath) {
			dropped++
			continue
		}
		out = append(out, r)
	}
	if want && dropped != 4 {
		t.Errorf("%d console routes mounted, want GET and HEAD of /console and /console/*file", dropped)
	}
	return out
}

func TestMountedRoutesUseOpenAPIPathTemplates(t *testing.T) {
	t.Parallel()
	srv, err := New(Options{Routes: []Route{{Method: http.MethodGet, Path: "/reports/:year/:id",
		Handler: http.NotFoundHandler()}}})
	if err != nil {
		t.Fatal(err)
	}
	want := routeSpec{Method: http.MethodGet, Path: "/reports/{year}/{id}"}
	if got := srv.mountedRoutes(); !slices.Contains(got, want) {
		t.Errorf("mountedRoutes() = %v, want it to hold %v", got, want)
	}
}

// oasChecker validates real exchanges against the document.
type oasChecker struct {
	router routers.Router
	opts   *openapi3filter.Options
}

// oasDecoders registers the body decoders kin-openapi lacks, once.
var oasDecoders sync.Once

func newOASChecker(t *testing.T) *oasChecker {
	t.Helper()
	oasDecoders.Do(func() {
		// OpenMetrics is text, like the Prometheus format.
		openapi3filter.RegisterBodyDecoder("application/openmetrics-text", openapi3filter.PlainBodyDecoder)
	})
	doc := oasLoad(t)
	// Match paths only: the test servers listen on random ports, not on the
	// documented server address.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &oasChecker{router: router, opts: &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			// Values may be tokens: keep them out of failure messages.
			openapi3.DisableSchemaErrorDetails(),
			openapi3.WithStringFormatValidator("uuid",
				openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		},
	}}
}

// oasExchange is one request and its answer.
type oasExchange struct {
	reqBody []byte
	req     *http.Request
	status  int
	header  http.Header
	body    []byte
}

// send performs a request. body, when not nil, is sent with contentType.
func oasSend(t *testing.T, method, url, contentType string, body []byte, hdr ...string) oasExchange {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return oasExchange{reqBody: body, req: req, status: resp.StatusCode, header: resp.Header, body: b}
}

// checkResponse validates the answer of x against the document.
func (c *oasChecker) checkResponse(t *testing.T, x oasExchange) {
	t.Helper()
	route, params, err := c.router.FindRoute(x.req)
	if err != nil {
		t.Fatalf("%s %s is not in the document: %v", x.req.Method, x.req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: x.req, PathParams: params, Route: route, Options: c.opts},
		Status:                 x.status,
		Header:                 x.header,
		Options:                c.opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in.SetBodyBytes(x.body)); err != nil {
		t.Errorf("%s %s answered %d not as documented: %v", x.req.Method, x.req.URL.Path, x.status, err)
	}
}

// checkRequest validates the request of x against the document, for
// requests that are meant to be valid.
func (c *oasChecker) checkRequest(t *testing.T, x oasExchange) {
	t.Helper()
	req := x.req.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(x.reqBody))
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not in the document: %v", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		t.Errorf("%s %s is a valid request the document refuses: %v", req.Method, req.URL.Path, err)
	}
}

// oasStep is one request of the walk through the API.
type oasStep struct {
	name   string
	method string
	// path is a function of the walk's state so far.
	path func(*oasWalk) string
	// body is sent as application/json unless contentType says otherwise.
	body        func(*oasWalk) string
	contentType string
	// hdr lists header name/value pairs; "{token}" is the access token.
	hdr    []string
	status int
	// validRequest also validates the request against the document.
	validRequest bool
	// then inspects the answer and updates the walk.
	then func(t *testing.T, w *oasWalk, x oasExchange)
}

// oasWalk is the state carried from step to step.
type oasWalk struct {
	userID          string
	access, refresh string
	id, putID       string
}

func oasFixed(s string) func(*oasWalk) string { return func(*oasWalk) string { return s } }

func oasEntryBody(assignee, key string) func(*oasWalk) string {
	return func(w *oasWalk) string {
		if assignee == "" {
			assignee = w.userID
		}
		return `{"key":"` + key + `","type":"t","data":{"n":1,"s":"x"},"assignee":{"id":"` + assignee + `"},"expiresIn":"1h"}`
	}
}

func oasEntryPath(w *oasWalk) string { return "/cache/user/" + w.id }

// decodeInto decodes an answer the step expects, failing without showing
// it (it may hold tokens).
func oasDecode(t *testing.T, x oasExchange, v any) {
	t.Helper()
	if err := json.Unmarshal(x.body, v); err != nil {
		t.Fatalf("answer is not the expected JSON: %v", err)
	}
}

func TestRealResponsesMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	check := newOASChecker(t)
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	w := &oasWalk{userID: st.userID}
	const otherUser = "0c8b9c0e-2f4a-4d6b-9a1e-5f3c2b1a0d9e"
	login := func(password string) func(*oasWalk) string {
		return func(*oasWalk) string {
			b, _ := json.Marshal(map[string]string{"username": oasUsername, "password": password})
			return string(b)
		}
	}
	steps := []oasStep{
		{name: "health is documented", method: "GET", path: oasFixed("/healthz"), status: 200, validRequest: true},
		{name: "readiness is documented", method: "GET", path: oasFixed("/readyz"), status: 200, validRequest: true},
		{name: "the document serves itself", method: "GET", path: oasFixed("/openapi.json"), status: 200, validRequest: true,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				if !bytes.Equal(x.body, OpenAPIDocument()) {
					t.Error("GET /openapi.json does not answer the embedded document")
				}
				if got := x.header.Get("Cache-Control"); got != OpenAPICacheControl {
					t.Errorf("Cache-Control = %q, want %q", got, OpenAPICacheControl)
				}
			}},
		{name: "the key set is documented", method: "GET", path: oasFixed("/.well-known/jwks.json"), status: 200, validRequest: true,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				var set struct{ Keys []map[string]any }
				oasDecode(t, x, &set)
				if len(set.Keys) == 0 {
					t.Error("the key set is empty; the walk meant to check a real key")
				}
			}},
		{name: "a login is 201 with a token pair", method: "POST", path: oasFixed("/auth/login"), body: login(oasPassword), status: 201, validRequest: true,
			then: func(t *testing.T, w *oasWalk, x oasExchange) {
				var p struct{ AccessToken, RefreshToken string }
				oasDecode(t, x, &p)
				w.access, w.refresh = p.AccessToken, p.RefreshToken
			}},
		{name: "a wrong password is 401", method: "POST", path: oasFixed("/auth/login"), body: login("not the password"), status: 401, validRequest: true},
		{name: "a login with a number for a username is 400", method: "POST", path: oasFixed("/auth/login"), body: oasFixed(`{"username":5,"password":"x"}`), status: 400},
		{name: "a login sent as text is 415", method: "POST", path: oasFixed("/auth/login"), body: login(oasPassword), contentType: "text/plain", status: 415},
		{name: "a login over the body limit is 413", method: "POST", path: oasFixed("/auth/login"),
			body: oasFixed(`{"username":"` + strings.Repeat("a", 5<<10) + `"}`), status: 413},
		{name: "a bad refresh token is 401", method: "POST", path: oasFixed("/auth/refresh"), body: oasFixed(`{"refreshToken":"not-a-token"}`), status: 401, validRequest: true},
		{name: "a refresh is 201 with a new pair", method: "POST", path: oasFixed("/auth/refresh"), status: 201, validRequest: true,
			body: func(w *oasWalk) string { return `{"refreshToken":"` + w.refresh + `"}` },
			then: func(t *testing.T, w *oasWalk, x oasExchange) {
				var p struct{ AccessToken, RefreshToken string }
				oasDecode(t, x, &p)
				w.access, w.refresh = p.AccessToken, p.RefreshToken
			}},
		{name: "a refresh with an unknown member is 400", method: "POST", path: oasFixed("/auth/refresh"), body: oasFixed(`{"token":"x"}`), status: 400},
		{name: "a refresh at /token/refresh is 201 with a new pair", method: "POST", path: oasFixed("/token/refresh"), status: 201, validRequest: true,
			body: func(w *oasWalk) string { return `{"refreshToken":"` + w.refresh + `"}` },
			then: func(t *testing.T, w *oasWalk, x oasExchange) {
				var p struct{ AccessToken, RefreshToken string }
				oasDecode(t, x, &p)
				w.access, w.refresh = p.AccessToken, p.RefreshToken
			}},
		{name: "a bad refresh token at /token/refresh is 401", method: "POST", path: oasFixed("/token/refresh"), body: oasFixed(`{"refreshToken":"not-a-token"}`), status: 401, validRequest: true},
		{name: "metrics with the metrics token are 200", method: "GET", path: oasFixed("/metrics"),
			hdr: []string{"Authorization", "Bearer " + oasMetricsToken}, status: 200, validRequest: true},
		{name: "metrics asked as OpenMetrics are OpenMetrics", method: "GET", path: oasFixed("/metrics"),
			hdr: []string{"Authorization", "Bearer " + oasMetricsToken, "Accept", "application/openmetrics-text"}, status: 200, validRequest: true,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				if ct := x.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
					t.Errorf("Content-Type %q, want application/openmetrics-text", ct)
				}
			}},
		{name: "metrics with a user's token are 403", method: "GET", path: oasFixed("/metrics"), hdr: []string{"Authorization", "Bearer {token}"}, status: 403, validRequest: true},
		{name: "metrics without a token are 401", method: "GET", path: oasFixed("/metrics"), status: 401},
		{name: "creating an entry is 201", method: "POST", path: oasFixed("/cache/user"), body: oasEntryBody("", "k"),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 201, validRequest: true,
			then: func(t *testing.T, w *oasWalk, x oasExchange) {
				var e struct{ ID string }
				oasDecode(t, x, &e)
				w.id = e.ID
			}},
		{name: "creating it again is 409", method: "POST", path: oasFixed("/cache/user"), body: oasEntryBody("", "k"),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 409, validRequest: true},
		{name: "creating without a token is 401", method: "POST", path: oasFixed("/cache/user"), body: oasEntryBody("", "k2"), status: 401},
		{name: "creating for another assignee is 403", method: "POST", path: oasFixed("/cache/user"), body: oasEntryBody(otherUser, "k2"),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 403, validRequest: true},
		{name: "creating with bad members is 400 with details", method: "POST", path: oasFixed("/cache/user"), body: oasFixed(`{"key":1,"typo":true}`),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 400,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				var e struct{ Details []struct{ Field string } }
				oasDecode(t, x, &e)
				if len(e.Details) < 2 {
					t.Errorf("details = %+v, want one per bad member", e.Details)
				}
			}},
		{name: "creating with a text body is 415", method: "POST", path: oasFixed("/cache/user"), body: oasEntryBody("", "k2"), contentType: "text/plain",
			hdr: []string{"Authorization", "Bearer {token}"}, status: 415},
		{name: "creating in an unknown assignment is 404", method: "POST", path: oasFixed("/cache/nope"), body: oasEntryBody("", "k2"), status: 404},
		{name: "creating in a public assignment needs no token", method: "POST", path: oasFixed("/cache/open"), body: oasEntryBody(otherUser, "k"),
			status: 201, validRequest: true},
		{name: "creating past the assignee's quota is 403", method: "POST", path: oasFixed("/cache/open"), body: oasEntryBody(otherUser, "k2"),
			status: 403, validRequest: true,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				var e struct{ ErrorCode string }
				oasDecode(t, x, &e)
				if e.ErrorCode != "CACHE_QUOTA_EXCEEDED" {
					t.Errorf("errorCode = %q, want CACHE_QUOTA_EXCEEDED", e.ErrorCode)
				}
			}},
		{name: "reading the entry is 200", method: "GET", path: oasEntryPath, hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true},
		{name: "reading it with its ETag is 304", method: "GET", path: oasEntryPath, hdr: []string{"Authorization", "Bearer {token}", "If-None-Match", `"1"`},
			status: 304, validRequest: true,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				if x.header.Get("ETag") != `"1"` || len(x.body) != 0 {
					t.Errorf("304 with ETag %q and %d body bytes, want \"1\" and none", x.header.Get("ETag"), len(x.body))
				}
			}},
		{name: "reading an unknown id is 404", method: "GET", path: oasFixed("/cache/user/" + otherUser),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 404, validRequest: true},
		{name: "listing bare is an array", method: "GET", path: oasFixed("/cache/user"), hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				var es []json.RawMessage
				oasDecode(t, x, &es)
				if len(es) != 1 {
					t.Errorf("listed %d entries, want 1", len(es))
				}
			}},
		{name: "listing with page is a page", method: "GET", hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true,
			path: oasFixed("/cache/user?page=1&limit=10&sort=dateCreated,DESC&filter=type||$eq||t&filter=key||$eq||k&cache=123"),
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				var p struct{ Total, Count, Page, PageCount int }
				oasDecode(t, x, &p)
				if p.Total != 1 || p.Count != 1 || p.Page != 1 || p.PageCount != 1 {
					t.Errorf("page = %+v, want one entry on one page", p)
				}
			}},
		{name: "listing with offset and simple filters is a page", method: "GET", hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true,
			path: func(w *oasWalk) string { return "/cache/user?offset=0&key=k&type=t&assignee.id=" + w.userID }},
		{name: "listing with the query language, trimmed by fields, is an array", method: "GET", hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true,
			path: oasFixed("/cache/user?filter[]=key||$contL||K&filter=version||$gte||1&or[]=type||$in||t,u&or=expirationDate||$isnull&sort[]=version,DESC&sort=key,ASC&fields=key,type&per_page=5"),
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				var es []map[string]any
				oasDecode(t, x, &es)
				if len(es) != 1 || len(es[0]) != 3 {
					t.Errorf("listed %v, want one entry with id, key and type", es)
				}
			}},
		{name: "listing with a search is a page", method: "GET", hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true,
			path: oasFixed("/cache/user?page=1&select=data&s=" + url.QueryEscape(`{"$or":[{"key":{"$startsL":"K"}},{"version":{"$gt":1,"$lt":5}}]}`))},
		{name: "listing with a join is 400", method: "GET", path: oasFixed("/cache/user?join=profile"), hdr: []string{"Authorization", "Bearer {token}"}, status: 400},
		{name: "listing with a malformed condition is 400", method: "GET", path: oasFixed("/cache/user?filter=key||$like||k"), hdr: []string{"Authorization", "Bearer {token}"}, status: 400},
		{name: "listing with an unknown parameter is 400", method: "GET", path: oasFixed("/cache/user?bogus=1"), hdr: []string{"Authorization", "Bearer {token}"}, status: 400},
		{name: "listing without a token is 401", method: "GET", path: oasFixed("/cache/user"), status: 401},
		{name: "replacing the current version is 200", method: "PUT", path: oasEntryPath, body: oasEntryBody("", "k"),
			hdr: []string{"Authorization", "Bearer {token}", "If-Match", `"1"`}, status: 200, validRequest: true},
		{name: "replacing a stale version is 412", method: "PUT", path: oasEntryPath, body: oasEntryBody("", "k"),
			hdr: []string{"Authorization", "Bearer {token}", "If-Match", `"1"`}, status: 412, validRequest: true},
		{name: "create-only on an existing entry is 412", method: "PUT", path: oasEntryPath, body: oasEntryBody("", "k"),
			hdr: []string{"Authorization", "Bearer {token}", "If-None-Match", "*"}, status: 412, validRequest: true},
		{name: "putting a new id is 201", method: "PUT", body: oasEntryBody("", "k3"), hdr: []string{"Authorization", "Bearer {token}"}, status: 201, validRequest: true,
			path: func(w *oasWalk) string {
				w.putID = "0193a000-0000-7000-8000-000000000001"
				return "/cache/user/" + w.putID
			}},
		{name: "putting onto another entry's key is 409", method: "PUT", path: oasEntryPath, body: oasEntryBody("", "k3"),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 409, validRequest: true},
		{name: "putting a malformed id is 404", method: "PUT", path: oasFixed("/cache/user/not-a-uuid"), body: oasEntryBody("", "k4"),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 404},
		{name: "patching is 200", method: "PATCH", path: oasEntryPath, body: oasFixed(`{"data":[1,2,3],"expiresIn":null}`),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true},
		{name: "patching a stale version is 412", method: "PATCH", path: oasEntryPath, body: oasFixed(`{"data":"x"}`),
			hdr: []string{"Authorization", "Bearer {token}", "If-Match", `"99"`}, status: 412, validRequest: true},
		{name: "patching to another assignee is 403", method: "PATCH", path: oasEntryPath, body: oasFixed(`{"assignee":{"id":"` + otherUser + `"}}`),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 403, validRequest: true},
		{name: "patching onto another entry's key is 409", method: "PATCH", path: oasEntryPath, body: oasFixed(`{"key":"k3"}`),
			hdr: []string{"Authorization", "Bearer {token}"}, status: 409, validRequest: true},
		{name: "patching with a body over the limit is 413", method: "PATCH", path: oasEntryPath,
			body: oasFixed(`{"data":"` + strings.Repeat("x", 5<<10) + `"}`), hdr: []string{"Authorization", "Bearer {token}"}, status: 413},
		{name: "deleting with If-None-Match is 400", method: "DELETE", path: oasEntryPath,
			hdr: []string{"Authorization", "Bearer {token}", "If-None-Match", "*"}, status: 400},
		{name: "deleting a stale version is 412", method: "DELETE", path: oasEntryPath,
			hdr: []string{"Authorization", "Bearer {token}", "If-Match", `"1"`}, status: 412, validRequest: true},
		{name: "deleting is 200 with the entry as deleted", method: "DELETE", path: oasEntryPath,
			hdr: []string{"Authorization", "Bearer {token}"}, status: 200, validRequest: true,
			then: func(t *testing.T, _ *oasWalk, x oasExchange) {
				var e struct{ DateDeleted *string }
				oasDecode(t, x, &e)
				if e.DateDeleted == nil {
					t.Error("dateDeleted is null in the answer of DELETE")
				}
			}},
		{name: "reading a deleted entry is 404", method: "GET", path: oasEntryPath, hdr: []string{"Authorization", "Bearer {token}"}, status: 404, validRequest: true},
		{name: "deleting a deleted entry is 404", method: "DELETE", path: oasEntryPath, hdr: []string{"Authorization", "Bearer {token}"}, status: 404, validRequest: true},
		{name: "a malformed bearer header is 401", method: "GET", path: oasFixed("/cache/user"), hdr: []string{"Authorization", "Bearer a b"}, status: 401},
		{name: "logging out is 204", method: "POST", path: oasFixed("/auth/logout"), hdr: []string{"Authorization", "Bearer {token}"}, status: 204, validRequest: true},
		{name: "logging out without a token is 401", method: "POST", path: oasFixed("/auth/logout"), status: 401},
		{name: "a set-up with a token that is not the link's is 403", method: "POST", path: oasFixed("/auth/setup"), status: 403, validRequest: true,
			body: oasFixed(`{"token":"not-the-link","username":"root","password":"a password of 27 bytes long"}`)},
		{name: "a set-up with an unknown member is 400", method: "POST", path: oasFixed("/auth/setup"), status: 400,
			body: oasFixed(`{"token":"x","username":"root","password":"a password of 27 bytes long","admin":true}`)},
		{name: "refreshing after logout is 401", method: "POST", path: oasFixed("/auth/refresh"), status: 401,
			body: func(w *oasWalk) string { return `{"refreshToken":"` + w.refresh + `"}` }},
	}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			var body []byte
			ct := ""
			if s.body != nil {
				body, ct = []byte(s.body(w)), "application/json"
				if s.contentType != "" {
					ct = s.contentType
				}
			}
			hdr := slices.Clone(s.hdr)
			for i := range hdr {
				hdr[i] = strings.ReplaceAll(hdr[i], "{token}", w.access)
			}
			x := oasSend(t, s.method, ts.URL+s.path(w), ct, body, hdr...)
			if x.status != s.status {
				msg := ""
				if x.status >= 400 {
					msg = string(x.body)
				}
				t.Fatalf("status %d, want %d %s", x.status, s.status, msg)
			}
			check.checkResponse(t, x)
			if s.validRequest {
				check.checkRequest(t, x)
			}
			if s.then != nil {
				s.then(t, w, x)
			}
		})
		if !ok {
			// Later steps build on this one.
			return
		}
	}

	t.Run("repeated failed logins are 429 with Retry-After", func(t *testing.T) {
		body := []byte(`{"username":"mallory","password":"guess"}`)
		var x oasExchange
		for range 10 {
			x = oasSend(t, "POST", ts.URL+"/auth/login", "application/json", body)
			check.checkResponse(t, x)
			if x.status != http.StatusUnauthorized {
				break
			}
		}
		if x.status != http.StatusTooManyRequests {
			t.Fatalf("status %d after repeated failures, want 429", x.status)
		}
	})
}

func TestUnreadyAnswersMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	check := newOASChecker(t)
	st := newOASStack(t, oasPinger{err: errors.New("database down")})
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	x := oasSend(t, "GET", ts.URL+"/readyz", "", nil)
	if x.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", x.status)
	}
	check.checkResponse(t, x)
}

// TestDocumentedSecurityMatchesTheGuard sends every operation without a
// token to a server with guards on: an operation documented as public
// (security: []) must never answer 401, and one documented as needing a
// bearer token only must answer 401. Cache operations, whose need depends
// on the assignment's policy, are documented with an optional token and
// skipped.
func TestDocumentedSecurityMatchesTheGuard(t *testing.T) {
	t.Parallel()
	doc := oasLoad(t)
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	for _, r := range oasDocumentedRoutes(doc) {
		op := doc.Paths.Value(r.Path).GetOperation(r.Method)
		sec := doc.Security
		if op.Security != nil {
			sec = *op.Security
		}
		public := len(sec) == 0
		optional := slices.ContainsFunc(sec, func(req openapi3.SecurityRequirement) bool { return len(req) == 0 })
		if optional && !public {
			continue
		}
		if op.OperationID == "refresh" || op.OperationID == "tokenRefresh" {
			// Public, but its credential is the body's refresh token: no
			// body is 401 by design (README.md, "What the API does"). The walk shows
			// it public: a refresh with a body and no bearer is 201.
			continue
		}
		t.Run(fmt.Sprintf("%s %s is public: %v", r.Method, r.Path, public), func(t *testing.T) {
			t.Parallel()
			// A real assignment (the stack's "user" is owner's) and id, so
			// an unknown assignment's 404 does not hide the guard.
			path := strings.NewReplacer("{assignment}", "user", "{id}", "0193a000-0000-7000-8000-000000000001").Replace(r.Path)
			x := oasSend(t, r.Method, ts.URL+path, "", nil)
			if got := x.status == http.StatusUnauthorized; got == public {
				t.Errorf("answered %d without a token", x.status)
			}
		})
	}
}

// oasFeed runs a change feed over an in-memory log for the test's lifetime
// and returns it with a constructor of repositories recording into it.
func oasFeed(t *testing.T, clock ports.Clock) (*background.Feed, func(table string) ports.CacheRepository) {
	t.Helper()
	log := memstore.NewChangeLog()
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return feed, func(table string) ports.CacheRepository { return feed.Observe(log.Repository(table)) }
}

// listConditionSeeds are conditions at the edges of the grammar, for the
// fuzz target below (its seed corpus, run by every go test).
var listConditionSeeds = []string{
	"key||$eq||a", "key||$eq||", "key||$eq", "key||eq||a||b", "key||$eqL||ÄPFEL", "key||eqL||a", "key||$gtL||a",
	"key||$eq||a\x00", "type||$in||a,,b", "type||$inL||", "type||$in", "id||$between||a,b", "id||$between||a",
	"id||$between||a,b,c", "assignee.id||$isnull", "assignee.id||$notnull||\x00x", "assignee.id||isnull||",
	"version||$eq||-9223372036854775808", "version||$eq||-9223372036854775809", "version||$eq||9223372036854775807",
	"version||$eq||9223372036854775808", "version||$eq||+0007", "version||$eq||1.5", "version||$eq||", "version||$eq||1_0",
	"version||$cont||1", "version||$eqL||1", "version||$in||1,2,-3", "version||$in||1,,2", "version||notin||1",
	"version||$between||1,2", "version||$between||1", "version||between||1,2,3", "version||$isnull||x",
	"dateCreated||$gte||2026-11-25T00:00:00Z", "dateCreated||$gte||2026-11-25T00:00:00.123456789123Z",
	"dateCreated||$gte||2026-11-25t00:00:00Z", "dateCreated||$gte||2026-11-25T00:00:00z", "dateCreated||$gte||2026-11-25T0:00:00Z",
	"dateCreated||$gte||2026-11-25T00:00:00,5Z", "dateCreated||$gte||2026-11-25T00:00:00+24:00", "dateCreated||$gte||2026-11-25T00:00:00+23:59",
	"dateCreated||$gte||2026-11-25T00:00:00+01:60", "dateCreated||$gte||2026-11-25T24:00:00Z", "dateCreated||$gte||2026-11-25T23:59:60Z",
	"dateUpdated||$eq||2024-02-29T00:00:00Z", "dateUpdated||$eq||2023-02-29T00:00:00Z", "dateUpdated||$eq||2000-02-29T00:00:00Z",
	"dateUpdated||$eq||1900-02-29T00:00:00Z", "dateUpdated||$eq||2026-04-31T00:00:00Z", "dateUpdated||$eq||2026-13-01T00:00:00Z",
	"expirationDate||$in||2026-01-01T00:00:00Z,2027-01-01T00:00:00-05:00", "expirationDate||$between||2026-01-01T00:00:00Z",
	"expirationDate||$eq||0000-06-01T00:00:00Z", "expirationDate||$eq||0001-06-01T00:00:00Z", "expirationDate||$eq||9999-06-01T00:00:00Z",
	"expirationDate||$eq||0000-12-31T23:00:00-02:00", "expirationDate||$excl||x", "expirationDate||$isnull", "data||$eq||1", "nope||$eq||1",
	"key", "key||", "||$eq||a", "key||$nope||a",
}

// FuzzListConditionPatternIsTheParser holds the document's ListCondition
// pattern to the server's parser: a condition the pattern admits is
// accepted, one it refuses is refused. The one rule the pattern leaves to
// prose is a date outside the years 0001 to 9999 once in UTC (the schema's
// description says so); the server may refuse such a date the pattern
// admits. `go test -fuzz FuzzListConditionPatternIsTheParser` looks further.
func FuzzListConditionPatternIsTheParser(f *testing.F) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument())
	if err != nil {
		f.Fatal(err)
	}
	schema := doc.Components.Schemas["ListCondition"].Value
	for _, s := range listConditionSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cond string) {
		if !utf8.ValidString(cond) || len(cond) > 1000 {
			t.Skip("JSON Schema strings are Unicode text; the 4 KiB bound is prose")
		}
		admitted := schema.VisitJSON(cond) == nil
		_, err := ParseListQuery("filter="+url.QueryEscape(cond), 100, 1000)
		switch {
		case admitted && err != nil && strings.Contains(err.Error(), "outside the years 0001 to 9999"):
		case admitted != (err == nil):
			t.Errorf("%q: the document admits it: %v; the server: %v", cond, admitted, err)
		}
	})
}

// listSearchSeeds are searches at the edges of the grammar of s.
var listSearchSeeds = []string{
	`{}`, `[]`, `"x"`, `null`, `{"key":"a"}`, `{"key":"a\u0000"}`, `{"key":1}`, `{"key":null}`, `{"key":{}}`,
	`{"key":{"$eq":"a","cont":"b"}}`, `{"key":{"$eqL":"A"}}`, `{"key":{"eqL":"A"}}`, `{"key":{"$gtL":"A"}}`,
	`{"key":{"$in":[]}}`, `{"key":{"$in":["a"]}}`, `{"key":{"$inL":["a","b"]}}`, `{"key":{"$in":"a"}}`,
	`{"key":{"$between":["a","b"]}}`, `{"key":{"$between":["a"]}}`, `{"key":{"$isnull":{"x":[1]}}}`,
	`{"key":{"$or":{"$eq":"a","$cont":"b"}}}`, `{"key":{"$or":{}}}`, `{"key":{"$or":"a"}}`, `{"key":{"$and":{"$eq":"a"}}}`,
	`{"version":1}`, `{"version":"1"}`, `{"version":"x"}`, `{"version":{"$gt":1,"$lt":5}}`, `{"version":{"$cont":"1"}}`,
	`{"version":{"$eqL":"1"}}`, `{"version":{"$in":[1,"2"]}}`, `{"version":{"$between":[1,2,3]}}`, `{"version":-9223372036854775808}`,
	`{"version":1.0}`, `{"version":1e3}`, `{"version":-0.5e1}`, `{"version":1.5}`, `{"version":1e999999999}`, `{"version":{"$in":[2E+1]}}`,
	`{"dateCreated":"2026-11-25T00:00:00Z"}`, `{"dateCreated":"2026-11-25"}`, `{"dateCreated":{"$gte":"2026-02-29T00:00:00Z"}}`,
	`{"expirationDate":null}`, `{"expirationDate":{"$notnull":true}}`, `{"$and":[]}`, `{"$or":[{"key":"a"},{"version":{"$gte":1}}]}`,
	`{"$or":[{}]}`, `{"$or":{"key":"a"}}`, `{"$and":[{"$or":[{"type":"t"}]}],"key":"k"}`, `{"data":1}`, `{"nope":1}`, `{"$not":[{}]}`,
}

// FuzzListSearchSchemaIsTheParser holds the document's ListSearch schema
// (the JSON of the s parameter) to the server's parser, as
// FuzzListConditionPatternIsTheParser does for conditions. The schema's
// description names what it leaves to prose: more than 50 conditions,
// more than 8 levels, a date outside the years 0001 to 9999 in UTC, and a
// number beyond 64 bits (JSON Schema validators read numbers as float64,
// exact to 15 digits; such numbers are skipped).
func FuzzListSearchSchemaIsTheParser(f *testing.F) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument())
	if err != nil {
		f.Fatal(err)
	}
	schema := doc.Components.Schemas["ListSearch"].Value
	for _, s := range listSearchSeeds {
		f.Add(s)
	}
	prose := []string{"conditions; at most", "nests", "outside the years 0001 to 9999"}
	f.Fuzz(func(t *testing.T, search string) {
		var v any
		if !utf8.ValidString(search) || len(search) > 1000 || json.Unmarshal([]byte(search), &v) != nil {
			t.Skip("not JSON: the document refuses it as content, the server as s")
		}
		if beyondFloat.MatchString(search) {
			t.Skip("a number of 16 digits or more: the schema sees it as a float64, the server exactly")
		}
		admitted := schema.VisitJSON(v) == nil
		_, err := ParseListQuery("s="+url.QueryEscape(search), 100, 1000)
		if admitted && err != nil && slices.ContainsFunc(prose, func(p string) bool { return strings.Contains(err.Error(), p) }) {
			return
		}
		if admitted != (err == nil) {
			t.Errorf("%s: the document admits it: %v; the server: %v", search, admitted, err)
		}
	})
}

// beyondFloat finds a JSON number with 16 significant digits or more, or
// an exponent of two digits or more, anywhere in a text.
var beyondFloat = regexp.MustCompile(`[0-9]{16}|[eE][+-]?0*[1-9][0-9]`)
