package ginhttp

import (
	_ "embed"
	"net/http"
	"slices"

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
