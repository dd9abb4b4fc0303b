package web

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

// ReadBody reads a request body that must be JSON: application/json
// (charset only UTF-8; else 415), within limit, the body-limit
// middleware's (else 413), and non-empty (else 400). A non-empty body
// without a Content-Type is 415.
func ReadBody(c *gin.Context, limit int64) ([]byte, error) {
	b, err := ReadOptionalBody(c, limit)
	if err == nil && IsBlank(b) {
		return nil, domain.InvalidField("body", "is required: send one JSON object")
	}
	return b, err
}

// ReadOptionalBody is ReadBody for a route where no body means something
// (a refresh without one is a missing token): an empty body, or a blank
// one sent as JSON, is returned as it is; the caller decides.
func ReadOptionalBody(c *gin.Context, limit int64) ([]byte, error) {
	r := c.Request
	cts := r.Header.Values("Content-Type")
	var ct string
	switch {
	case len(cts) > 1:
		return nil, ErrUnsupportedMediaType
	case len(cts) == 1:
		ct = cts[0]
		if !isJSONMediaType(ct) {
			return nil, ErrUnsupportedMediaType
		}
	}
	size := r.ContentLength
	if size < 0 || size > limit {
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
				return nil, PayloadTooLarge(limit)
			}
			return nil, domain.InvalidField("body", "could not be read")
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	if ct == "" && len(buf) > 0 {
		return nil, ErrUnsupportedMediaType
	}
	return buf, nil
}

// IsBlank reports whether b holds only JSON white space.
func IsBlank(b []byte) bool {
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
