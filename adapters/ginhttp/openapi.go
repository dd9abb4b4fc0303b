package ginhttp

import (
	_ "embed"
	"net/http"
	"slices"
	"strings"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/gin-gonic/gin"
)

// openAPIDocument is the OpenAPI 3.0 description of every route New can
// mount, written by hand. Tests hold it to the real router in both
// directions and validate real answers against it.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPICacheControl is the Cache-Control of GET /openapi.json: the
// document changes only with the binary, so caches may keep it a while.
const OpenAPICacheControl = "public, max-age=300"

// OpenAPIDocument returns the OpenAPI 3.0.3 document (JSON) served at
// GET /openapi.json: every route of the HTTP API, its parameters, bodies,
// answers and headers. Test suites use it to validate real responses. It
// returns a copy, so the caller may change it freely.
//
// The document describes the default configuration: the login and refresh
// body member names are the default ones, and GET /metrics is listed
// although it is mounted only when metrics have no listen address of their
// own. Integrators' extra routes (Options.Routes) are not in it.
func OpenAPIDocument() []byte { return slices.Clone(openAPIDocument) }

// openAPI serves the document; it is public whatever the guard says.
func (s *Server) openAPI(c *gin.Context) {
	c.Writer.Header()["Cache-Control"] = []string{OpenAPICacheControl}
	web.WriteJSON(c, http.StatusOK, openAPIDocument)
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
