// Package console is the web console's room of the HTTP adapter (README,
// "Web console"): its embedded files, served at Path with their own
// Content-Security-Policy, off the API's handler chains.
package console

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

// files is the web console: plain JavaScript modules, one style sheet
// and its pages, served as they are written; there is no build step.
//
//go:embed *.html *.js *.css
var files embed.FS

// Path is where the console is served (ginhttp.Options.Console).
const Path = "/console/"

// SetupPath is the console's set-up page of the first admin; the link
// serve logs is this page with the token in the fragment (#token=…),
// which browsers never send, so the token reaches no access log or
// Referer.
const SetupPath = Path + "setup"

// CSP is the Content-Security-Policy of every console answer: only
// the console's own files, no inline script or style, API calls to the
// same origin only, never framed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one file of the console, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// contentTypes maps the console's file extensions to their types;
// a file of another extension is not embedded (see files).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
}

// load reads the embedded files once and adds assignments.json,
// the names of the configured assignments for the entry browser's select
// (not secret: an unknown name is 404 whoever asks).
func load(assignments []string) (map[string]asset, error) {
	out := map[string]asset{}
	add := func(name string, body []byte) error {
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return fmt.Errorf("ginhttp: console file %q has no known content type", name)
		}
		sum := sha256.Sum256(body)
		out[name] = asset{body: body, contentType: ct,
			etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
		return nil
	}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return add(p, b)
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

// Mount serves the console at Path, its assignment select offering
// assignments, as bare routes: no guard (the files are not secret; every
// API call they make is guarded) and no middleware of its own, so the API
// routes run exactly as without it.
func Mount(h *web.Host, assignments []string) error {
	assets, err := load(assignments)
	if err != nil {
		return err
	}
	redirect := func(c *gin.Context) {
		headers(c.Writer.Header())
		c.Redirect(http.StatusMovedPermanently, Path)
	}
	serve := func(c *gin.Context) { serveFile(h, c, assets) }
	// HEAD answers as GET without the body (net/http drops it), as for
	// any static file.
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		for _, rt := range []web.Route{
			{Method: method, Path: strings.TrimSuffix(Path, "/"), Handler: redirect, Bare: true},
			{Method: method, Path: Path + "*file", Handler: serve, Bare: true},
		} {
			if err := h.Mount(rt); err != nil {
				return err
			}
		}
	}
	return nil
}

// headers sets the hardening every console answer carries.
func headers(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// serveFile answers one console file; "/" is index.html. The files
// change only with the binary, so they are revalidated (no-cache) against
// their ETag, a hash of the content: a new binary's files are never
// served stale, an unchanged file costs a 304.
func serveFile(host *web.Host, c *gin.Context, files map[string]asset) {
	h := c.Writer.Header()
	headers(h)
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
		host.Fail(c, web.ErrRouteNotFound)
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
