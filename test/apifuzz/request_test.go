package apifuzz_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// operation is one documented operation.
type operation struct {
	id, method, path string
	op               *openapi3.Operation
	params           openapi3.Parameters // the path item's and the operation's
	// bearer: the operation declares bearerAuth; anonymous: it also
	// declares anonymous access ({}); admin: it is for admins only (its
	// path is under /admin, docs/admin.md).
	bearer, anonymous, admin bool
}

func operations(doc *openapi3.T) []*operation {
	var out []*operation
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			o := &operation{id: op.OperationID, method: method, path: path, op: op, admin: strings.HasPrefix(path, "/admin/")}
			o.params = append(slices.Clone(item.Parameters), op.Parameters...)
			sec := doc.Security
			if op.Security != nil {
				sec = *op.Security
			}
			o.anonymous = len(sec) == 0
			for _, req := range sec {
				if len(req) == 0 {
					o.anonymous = true
				}
				if _, ok := req["bearerAuth"]; ok {
					o.bearer = true
				}
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Which credential a request carries.
const (
	authNone    = "none"
	authValid   = "valid"   // the current access token: the admin's on an admin operation, else the user's
	authGarbage = "garbage" // a bearer value that is no token
	// authNonAdmin: on an admin operation, the access token of the user
	// who is not an admin (docs/admin.md: 403 before anything else).
	authNonAdmin = "nonadmin"
)

// Whose tokens a login or refresh answers: the user's (""), the admin's,
// or a throwaway user's of a stateful round (kept by the round, not by
// learn).
const (
	whoUser  = ""
	whoAdmin = "admin"
	whoAside = "aside"
)

// request is one generated request.
type request struct {
	op     *operation
	path   map[string]string
	query  [][2]string
	header [][2]string
	auth   string
	// body is sent with contentType when hasBody.
	body        []byte
	contentType string
	hasBody     bool
	// mutation says how the generator meant to make it invalid ("" when
	// it meant it valid); the document decides (see valid).
	mutation string
	// who: whose tokens the request carries and answers (whoUser,
	// whoAdmin, whoAside); token is the access token of a whoAside step.
	who, token string
}

func (r *request) target() string {
	p := r.op.path
	for name, v := range r.path {
		p = strings.ReplaceAll(p, "{"+name+"}", url.PathEscape(v))
	}
	if len(r.query) == 0 {
		return p
	}
	var q []string
	for _, kv := range r.query {
		q = append(q, url.QueryEscape(kv[0])+"="+url.QueryEscape(kv[1]))
	}
	return p + "?" + strings.Join(q, "&")
}

// httpRequest builds the request for base ("http://host:port"); token is
// the access token the auth mode names.
func (r *request) httpRequest(base, token string) (*http.Request, error) {
	var body *bytes.Reader
	if r.hasBody {
		body = bytes.NewReader(r.body)
	}
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(context.Background(), r.op.method, base+r.target(), body)
	} else {
		req, err = http.NewRequestWithContext(context.Background(), r.op.method, base+r.target(), nil)
	}
	if err != nil {
		return nil, err
	}
	if r.hasBody && r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	for _, kv := range r.header {
		req.Header[http.CanonicalHeaderKey(kv[0])] = append(req.Header[http.CanonicalHeaderKey(kv[0])], kv[1])
	}
	switch r.auth {
	case authValid, authNonAdmin:
		req.Header.Set("Authorization", "Bearer "+token)
	case authGarbage:
		req.Header.Set("Authorization", "Bearer not.a-token")
	}
	return req, nil
}

// paramValues serialises a drawn value the way the document's style
// (form, exploded; simple for headers) writes it.
func paramValues(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return []string{v}
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}
	case bool:
		return []string{strconv.FormatBool(v)}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, paramValues(x)...)
		}
		return out
	}
	return []string{string(mustJSON(v))}
}
