package apifuzz_test

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// state is what the stateful pass has learnt and the generated cases
// reuse: the fuzzer's user id, its current tokens, live entry ids; the
// admin's id and tokens, the ids of throwaway users (never the fuzzer's
// own two: a drawn password set or disable on them would lock the run
// out) and audit cursors the server gave.
type state struct {
	userID          string
	access, refresh string
	ids             []string

	adminID                   string
	adminAccess, adminRefresh string
	users                     []string
	cursors                   []string
}

// Parameters the generator leaves alone. access_token would put a token
// in the query string, where a failure report could show it; the query
// language's combinations are drawn by listQuery instead.
var skipParams = map[string]bool{"access_token": true}

// The document states these exclusions in prose ("not both" for limit and
// per_page, page and offset; the If-None-Match parameter's description for
// it with If-Match); OpenAPI 3.0 cannot express them, so a case meant
// valid never holds both, and fuzzer.verdict counts a case holding both
// as invalid.
var exclusivePairs = [][2]string{{"limit", "per_page"}, {"page", "offset"}, {"If-Match", "If-None-Match"}}

// newCase draws a request for op: valid as far as the generator knows
// when invalid is false, else with one mutation.
func (f *fuzzer) newCase(op *operation, invalid bool) *request {
	g := f.gen
	r := &request{op: op, path: map[string]string{}, auth: authNone}
	if op.bearer {
		switch k := g.r.IntN(10); {
		case k < 6 || k == 6 && !op.admin:
			r.auth = authValid
		case k == 6:
			r.auth = authNonAdmin
		case k < 9 && !(invalid && !op.anonymous):
			r.auth = authGarbage
		}
	}
	var sites []*openapi3.Parameter
	for _, ref := range op.params {
		p := ref.Value
		if skipParams[p.Name] || paramSchema(p) == nil {
			continue
		}
		sites = append(sites, p)
		if p.In == "path" {
			r.path[p.Name] = f.pathValue(op, p)
			continue
		}
		if !p.Required && !g.chance(3) {
			continue
		}
		v, ok := g.value(paramSchema(p))
		if !ok {
			continue
		}
		f.setParam(r, p, v)
	}
	for _, pair := range exclusivePairs {
		if r.has(pair[0]) && r.has(pair[1]) {
			r.drop(pair[g.r.IntN(2)])
		}
	}
	if (op.id == "listCacheEntries" || op.id == "adminListCacheEntries") && g.chance(2) {
		f.listQuery(r)
	}
	if op.id == "adminListUsers" && g.chance(2) {
		f.userQuery(r)
	}
	if op.id == "adminAudit" && len(f.st.cursors) > 0 && g.chance(3) {
		r.drop("before")
		r.query = append(r.query, [2]string{"before", f.st.cursors[g.r.IntN(len(f.st.cursors))]})
	}
	var body *openapi3.Schema
	if rb := op.op.RequestBody; rb != nil {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			body = mt.Schema.Value
			if v, ok := g.value(body); ok {
				f.personalise(v)
				r.body, r.contentType, r.hasBody = mustJSON(v), "application/json", true
			}
		}
	}
	if !invalid {
		return r
	}
	f.mutate(r, body, sites)
	return r
}

// pathValue is a path parameter's value: mostly the configured assignment
// and known ids (a throwaway user's on the admin's user routes), so cases
// reach the handlers; '/' is left out, since an escaped slash is another
// route to the router.
func (f *fuzzer) pathValue(op *operation, p *openapi3.Parameter) string {
	g := f.gen
	switch {
	case p.Name == "assignment" && !g.chance(8):
		return "user"
	case p.Name == "id" && op.admin && len(f.st.users) > 0 && g.chance(2):
		return f.st.users[g.r.IntN(len(f.st.users))]
	case p.Name == "id" && !op.admin && len(f.st.ids) > 0 && g.chance(2):
		return f.st.ids[g.r.IntN(len(f.st.ids))]
	}
	v, _ := g.value(paramSchema(p))
	s := strings.ReplaceAll(paramValues(v)[0], "/", "")
	if s == "" || s == "." || s == ".." {
		return "user"
	}
	return s
}

// personalise aims drawn bodies at the fuzzer's own user (still valid for
// the schema) so that, under the default owner policy, writes get past the
// access check half of the time, and logins name the real user.
func (f *fuzzer) personalise(v any) {
	obj, ok := v.(map[string]any)
	if !ok || !f.gen.chance(2) {
		return
	}
	if a, ok := obj["assignee"].(map[string]any); ok {
		a["id"] = f.st.userID
	}
	if _, ok := obj["username"]; ok {
		obj["username"] = fuzzUsername
	}
	if _, ok := obj["refreshToken"]; ok && f.st.refresh != "" {
		obj["refreshToken"] = f.st.refresh
	}
}

// paramSchema is the schema of p's value: its schema, or that of its
// application/json content (s, a JSON-valued query parameter); nil when
// it has neither.
func paramSchema(p *openapi3.Parameter) *openapi3.Schema {
	if p.Schema != nil {
		return p.Schema.Value
	}
	if mt := p.Content.Get("application/json"); mt != nil && mt.Schema != nil {
		return mt.Schema.Value
	}
	return nil
}

func (f *fuzzer) setParam(r *request, p *openapi3.Parameter, v any) {
	r.dropParam(p)
	values := paramValues(v)
	if p.Content != nil {
		values = []string{string(mustJSON(v))}
	}
	for _, s := range values {
		if p.In == "query" {
			r.query = append(r.query, [2]string{p.Name, s})
		} else {
			r.header = append(r.header, [2]string{p.Name, s})
		}
	}
}

// mutate makes r invalid in one place: the body (a schema violation, not
// JSON at all, an undocumented media type or none), a parameter, or the
// credential of an operation that requires one.
func (f *fuzzer) mutate(r *request, body *openapi3.Schema, sites []*openapi3.Parameter) {
	g := f.gen
	for range 10 {
		switch k := g.r.IntN(6); {
		case k == 0 && body != nil:
			if v, how, ok := g.invalid(body); ok {
				r.body, r.contentType, r.hasBody, r.mutation = mustJSON(v), "application/json", true, "body: "+how
				return
			}
		case k == 1 && body != nil:
			r.body, r.contentType, r.hasBody, r.mutation = []byte(`{"key":`), "application/json", true, "body: not JSON"
			return
		case k == 2 && body != nil:
			r.contentType, r.mutation = "text/plain", "body: sent as text/plain"
			return
		case k == 3 && body != nil && r.op.op.RequestBody.Value.Required:
			r.body, r.hasBody, r.mutation = nil, false, "body: missing"
			return
		case k == 4 && r.op.bearer && !r.op.anonymous:
			r.auth, r.mutation = authNone, "no credential"
			return
		case k == 5 && len(sites) > 0:
			p := sites[g.r.IntN(len(sites))]
			v, how, ok := g.invalid(paramSchema(p))
			// null has no form in a query or a header: it would be absent
			// (a JSON-valued parameter writes it as null).
			if !ok || (len(paramValues(v)) == 0 && p.Content == nil) || (p.In == "path" && strings.Contains(paramValues(v)[0], "/")) {
				continue
			}
			if p.In == "path" {
				r.path[p.Name] = paramValues(v)[0]
			} else {
				f.setParam(r, p, v)
			}
			r.mutation = p.In + " " + p.Name + ": " + how
			return
		}
	}
}

func (r *request) has(name string) bool {
	for _, kv := range append(r.query, r.header...) {
		if strings.EqualFold(kv[0], name) {
			return true
		}
	}
	return false
}

func (r *request) drop(name string) {
	keep := func(kvs [][2]string) [][2]string {
		var out [][2]string
		for _, kv := range kvs {
			if !strings.EqualFold(kv[0], name) {
				out = append(out, kv)
			}
		}
		return out
	}
	r.query, r.header = keep(r.query), keep(r.header)
}

func (r *request) dropParam(p *openapi3.Parameter) { r.drop(p.Name) }
