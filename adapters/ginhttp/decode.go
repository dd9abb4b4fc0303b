package ginhttp

import (
	"errors"
	"io"
	"net/http"
	"strconv"
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

// cacheBody is the DTO of the POST, PUT and PATCH bodies, with presence
// recorded for every field so that PATCH can tell absent from null.
type cacheBody struct {
	Key, Type     string
	HasKey        bool
	HasType       bool
	HasData       bool
	Data          []byte // raw JSON exactly as sent; nil when absent or null
	HasAssignee   bool
	AssigneeID    string
	HasAssigneeID bool // assignee.id was given
	// HasExpiresIn says the expiresIn member was present; ExpiresIn is nil
	// when it was null.
	HasExpiresIn bool
	ExpiresIn    *string
}

// decodeCacheBody decodes a cache body strictly: UTF-8, exactly one JSON object;
// members key, type (strings), data (any JSON value but null), assignee
// (an object with the string member id) and expiresIn (a string or null).
// Unknown and repeated members, wrong types and trailing data are 400s
// naming the field; every such problem is listed, up to maxProblems.
// The returned Data aliases b.
func decodeCacheBody(b []byte) (cacheBody, error) {
	var (
		dto  cacheBody
		errs problems
		sc   = scanner{b: b}
	)
	if !utf8.Valid(b) {
		return dto, domain.InvalidField("body", "must be UTF-8 encoded")
	}
	if c := sc.peek(); c != '{' {
		if c == 0 {
			return dto, domain.InvalidField("body", "is required: send one JSON object")
		}
		if c == '"' || c == '[' || c == 't' || c == 'f' || c == 'n' || c == '-' || isDigit(c) {
			return dto, domain.InvalidField("body", "must be a JSON object, not "+kindName(c))
		}
	}
	err := sc.object(func(name string) error {
		switch name {
		case "key":
			return stringMember(&sc, &errs, "key", &dto.HasKey, &dto.Key)
		case "type":
			return stringMember(&sc, &errs, "type", &dto.HasType, &dto.Type)
		case "data":
			if dto.HasData {
				errs.add("data", "is given more than once")
			}
			dto.HasData = true
			raw, err := sc.value()
			if err != nil {
				return err
			}
			if string(raw) == "null" {
				errs.add("data", "must not be null")
				return nil
			}
			dto.Data = raw
			return nil
		case "assignee":
			if dto.HasAssignee {
				errs.add("assignee", "is given more than once")
			}
			dto.HasAssignee = true
			if c := sc.peek(); c != '{' {
				errs.add("assignee", "must be an object with a string id, not "+kindName(c))
				_, err := sc.value()
				return err
			}
			return sc.object(func(name string) error {
				if name == "id" {
					return stringMember(&sc, &errs, "assignee.id", &dto.HasAssigneeID, &dto.AssigneeID)
				}
				errs.add("assignee."+clip(name), "is not a known field")
				_, err := sc.value()
				return err
			})
		case "expiresIn":
			if dto.HasExpiresIn {
				errs.add("expiresIn", "is given more than once")
			}
			dto.HasExpiresIn = true
			switch c := sc.peek(); c {
			case 'n':
				dto.ExpiresIn = nil
				return sc.literal("null")
			case '"':
				v, err := sc.str()
				if err != nil {
					return err
				}
				dto.ExpiresIn = &v
				return nil
			default:
				msg := "must be a duration string such as \"1h\" or null, not " + kindName(c)
				if c == '-' || isDigit(c) {
					msg = "must be a duration string with a unit, such as \"30s\" or \"1h\", or null; a bare number is not accepted"
				}
				errs.add("expiresIn", msg)
				_, err := sc.value()
				return err
			}
		default:
			errs.add(clip(name), "is not a known field")
			_, err := sc.value()
			return err
		}
	})
	if err != nil {
		return cacheBody{}, bodyError(err)
	}
	// peek answers 0 for a NUL byte as for the end, so compare lengths.
	if sc.skipSpace(); sc.i < len(sc.b) {
		return cacheBody{}, domain.InvalidField("body", "unexpected data after the JSON object at byte "+strconv.Itoa(sc.i))
	}
	if len(errs) > 0 {
		return cacheBody{}, domain.Invalid(errs...)
	}
	return dto, nil
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
