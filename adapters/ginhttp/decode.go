package ginhttp

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

// maxProblems bounds the field problems one answer lists, so a body with
// thousands of unknown fields gets a short answer.
const maxProblems = 20

// maxNameInError bounds how much of an unknown member name is echoed back.
const maxNameInError = 64

// problems collects per-field problems of a body.
type problems []domain.FieldError

func (p *problems) add(field, msg string) {
	if len(*p) < maxProblems {
		*p = append(*p, domain.FieldError{Field: field, Message: msg})
	}
}

// bodyError turns a syntax error into the validation error of field "body".
func bodyError(err error) error {
	var se *syntaxError
	if errors.As(err, &se) {
		return domain.InvalidField("body", "malformed JSON: "+se.Error())
	}
	return err
}

// readBody reads a request body that must be JSON: the Content-Type must be
// application/json (parameters allowed; a charset other than UTF-8 is not),
// the body must fit the limit the body-limit middleware set (413 otherwise),
// and be non-empty. A body without a Content-Type is refused
// with 415 too, unless it is empty (then 400: the body is required).
func (s *Server) readBody(c *gin.Context) ([]byte, error) {
	b, err := s.readOptionalBody(c)
	if err == nil && isBlank(b) {
		return nil, domain.InvalidField("body", "is required: send one JSON object")
	}
	return b, err
}

// readOptionalBody is readBody for a route where no body means something
// (a refresh without one is a missing token): an empty body, or a blank
// one sent as JSON, is returned as it is; the caller decides.
func (s *Server) readOptionalBody(c *gin.Context) ([]byte, error) {
	r := c.Request
	cts := r.Header.Values("Content-Type")
	var ct string
	switch {
	case len(cts) > 1:
		return nil, errUnsupportedMediaType
	case len(cts) == 1:
		ct = cts[0]
		if !isJSONMediaType(ct) {
			return nil, errUnsupportedMediaType
		}
	}
	size := r.ContentLength
	if size < 0 || size > s.bodyLimit {
		size = 512
	}
	buf := make([]byte, 0, size+1)
	for {
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, payloadTooLarge(s.bodyLimit)
			}
			return nil, domain.InvalidField("body", "could not be read")
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	if ct == "" && len(buf) > 0 {
		return nil, errUnsupportedMediaType
	}
	return buf, nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// isJSONMediaType reports whether a Content-Type names application/json,
// ignoring case and parameters, with at most charset=utf-8.
func isJSONMediaType(ct string) bool {
	mt, params, _ := strings.Cut(ct, ";")
	if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return false
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, val, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(name), "charset") {
			val = strings.Trim(strings.TrimSpace(val), `"`)
			if !strings.EqualFold(val, "utf-8") && !strings.EqualFold(val, "utf8") {
				return false
			}
		}
	}
	return true
}

// cacheBody is the DTO of the POST, PUT and PATCH bodies; its tags are
// the members' names, its field types how each is read (jsonbody.go), and
// every field records its presence so that PATCH can tell absent from
// null.
type cacheBody struct {
	Key       jsonString   `json:"key"`
	Type      jsonString   `json:"type"`
	Data      jsonValue    `json:"data"` // raw JSON exactly as sent
	Assignee  assigneeBody `json:"assignee"`
	ExpiresIn jsonDuration `json:"expiresIn"`
}

// assigneeBody is the assignee member of a cache body.
type assigneeBody struct {
	jsonObject
	ID jsonString `json:"id"`
}

// cacheBodyTable is cacheBody's table, built once.
var cacheBodyTable = newBodyTable[cacheBody]()

// decodeCacheBody decodes a cache body strictly (bodyTable.decode): UTF-8,
// exactly one JSON object; members key, type (strings), data (any JSON
// value but null), assignee (an object with the string member id) and
// expiresIn (a string or null). The returned Data aliases b.
func decodeCacheBody(b []byte) (cacheBody, error) {
	return cacheBodyTable.decode(b)
}

// stringMember reads a string member into *dst, noting problems.
func stringMember(sc *scanner, errs *problems, field string, has *bool, dst *string) error {
	if *has {
		errs.add(field, "is given more than once")
	}
	*has = true
	if c := sc.peek(); c != '"' {
		errs.add(field, "must be a string, not "+kindName(c))
		_, err := sc.value()
		return err
	}
	v, err := sc.str()
	if err != nil {
		return err
	}
	if strings.IndexByte(v, 0) >= 0 {
		// No store can keep a NUL in a text column; refuse it here rather
		// than fail in the database.
		errs.add(field, "must not contain the NUL character")
	}
	*dst = v
	return nil
}

// clip shortens a client-chosen name before it is echoed in an error.
func clip(s string) string {
	if len(s) <= maxNameInError {
		return s
	}
	cut := maxNameInError
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
