package ginhttp

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/gin-gonic/gin"
)

// consoleFiles is the web console (README, "Web console"): plain
// JavaScript modules, one style sheet and one page, served as they are
// written; there is no build step.
//
//go:embed console/*.html console/*.js console/*.css
var consoleFiles embed.FS

// ConsolePath is where the console is served (Options.Console).
const ConsolePath = "/console/"

// ConsoleCSP is the Content-Security-Policy of every console answer: only
// the console's own files, no inline script or style, API calls to the
// same origin only, never framed.
const ConsoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// consoleAsset is one file of the console, ready to serve.
type consoleAsset struct {
	body        []byte
	contentType string
	etag        string
}

// consoleContentTypes maps the console's file extensions to their types;
// a file of another extension is not embedded (see consoleFiles).
var consoleContentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
}

// loadConsole reads the embedded files once and adds assignments.json,
// the names of the configured assignments for the entry browser's select
// (not secret: an unknown name is 404 whoever asks).
func loadConsole(assignments []string) (map[string]consoleAsset, error) {
	out := map[string]consoleAsset{}
	add := func(name string, body []byte) error {
		ct, ok := consoleContentTypes[path.Ext(name)]
		if !ok {
			return fmt.Errorf("ginhttp: console file %q has no known content type", name)
		}
		sum := sha256.Sum256(body)
		out[name] = consoleAsset{body: body, contentType: ct,
			etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
		return nil
	}
	err := fs.WalkDir(consoleFiles, "console", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := consoleFiles.ReadFile(p)
		if err != nil {
			return err
		}
		return add(strings.TrimPrefix(p, "console/"), b)
	})
	if err != nil {
		return nil, err
	}
	if assignments == nil {
		assignments = []string{}
	}
	names, err := json.Marshal(assignments)
	if err != nil {
		return nil, err
	}
	return out, add("assignments.json", names)
}

// mountConsole serves the console at /console/ on the bare engine: no
// guard (the files are not secret; every API call they make is guarded)
// and no middleware of its own, so the API routes run exactly as without
// it.
func (s *Server) mountConsole(assignments []string) (err error) {
	files, err := loadConsole(assignments)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ginhttp: console routes: %v", r)
		}
	}()
	redirect := func(c *gin.Context) {
		consoleHeaders(c.Writer.Header())
		c.Redirect(http.StatusMovedPermanently, ConsolePath)
	}
	serve := func(c *gin.Context) { s.serveConsole(c, files) }
	// HEAD answers as GET without the body (net/http drops it), as for
	// any static file.
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		s.engine.Handle(method, strings.TrimSuffix(ConsolePath, "/"), redirect)
		s.engine.Handle(method, ConsolePath+"*file", serve)
	}
	return nil
}

// consoleHeaders sets the hardening every console answer carries.
func consoleHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ConsoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// serveConsole answers one console file; "/" is index.html. The files
// change only with the binary, so they are revalidated (no-cache) against
// their ETag, a hash of the content: a new binary's files are never
// served stale, an unchanged file costs a 304.
func (s *Server) serveConsole(c *gin.Context, files map[string]consoleAsset) {
	h := c.Writer.Header()
	consoleHeaders(h)
	name := strings.TrimPrefix(c.Param("file"), "/")
	if name == "" {
		name = "index.html"
	}
	a, ok := files[name]
	if !ok && path.Ext(name) == "" {
		// A page is also served without its extension: /console/setup.
		a, ok = files[name+".html"]
	}
	if !ok {
		s.writeError(c, web.ErrRouteNotFound)
		return
	}
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "no-cache")
	if inm := c.GetHeader("If-None-Match"); inm != "" && etagListed(inm, a.etag) {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, a.contentType, a.body)
}

// etagListed reports whether an If-None-Match value names etag (or is *).
func etagListed(inm, etag string) bool {
	for _, v := range strings.Split(inm, ",") {
		v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
		if v == "*" || v == etag {
			return true
		}
	}
	return false
}
