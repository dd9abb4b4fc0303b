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

// OpenAPIDocument returns a copy of the OpenAPI 3.0.3 document (JSON)
// served at GET /openapi.json. It describes the default configuration
// (default login and refresh member names; GET /metrics is listed,
// although mounted only without a metrics address of its own) and not
// the integrators' routes (Options.Routes).
func OpenAPIDocument() []byte { return slices.Clone(openAPIDocument) }

// openAPI serves the document; it is public whatever the guard says.
func (s *Server) openAPI(c *gin.Context) {
	c.Writer.Header()["Cache-Control"] = []string{OpenAPICacheControl}
	web.WriteJSON(c, http.StatusOK, openAPIDocument)
}
