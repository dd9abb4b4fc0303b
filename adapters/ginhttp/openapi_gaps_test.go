package ginhttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// The two refresh routes are one operation under two paths: the document
// describes them from one source (components' request body and responses)
// and nothing but their names and descriptions may differ.
func TestBothRefreshRoutesAreDocumentedAlike(t *testing.T) {
	t.Parallel()
	doc := oasLoad(t)
	a := *doc.Paths.Value("/auth/refresh").Post
	b := *doc.Paths.Value("/token/refresh").Post
	for _, op := range []*struct{ id, summary, desc *string }{
		{&a.OperationID, &a.Summary, &a.Description}, {&b.OperationID, &b.Summary, &b.Description},
	} {
		*op.id, *op.summary, *op.desc = "", "", ""
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("POST /auth/refresh and POST /token/refresh are documented differently:\n%s\n%s", ja, jb)
	}
	if a.RequestBody == nil || a.RequestBody.Ref == "" {
		t.Error("the refresh request body is not a shared component")
	}
}

// oasGapStack is the stack on a real listener with a logged-in caller.
type oasGapStack struct {
	url, token, userID string
	check              *oasChecker
}

func newOASGapStack(t *testing.T) *oasGapStack {
	t.Helper()
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	b, _ := json.Marshal(map[string]string{"username": oasUsername, "password": oasPassword})
	x := oasSend(t, http.MethodPost, ts.URL+"/auth/login", "application/json", b)
	var p struct{ AccessToken string }
	oasDecode(t, x, &p)
	return &oasGapStack{url: ts.URL, token: p.AccessToken, userID: st.userID, check: newOASChecker(t)}
}

// docRefuses reports whether the document refuses x's request.
func (c *oasChecker) docRefuses(t *testing.T, x oasExchange) bool {
	t.Helper()
	req := x.req.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(x.reqBody))
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not in the document: %v", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}
	return openapi3filter.ValidateRequest(context.Background(), in) != nil
}

// Schemathesis found requests the document admitted and the server
// refused, and the other way round. Each is now on the same side of both.
func TestTheDocumentAndTheServerAgreeOnWhatIsValid(t *testing.T) {
	t.Parallel()
	s := newOASGapStack(t)
	entry := func(key, typ, data, expiresIn string) []byte {
		return []byte(`{"key":` + key + `,"type":` + typ + `,"data":` + data + `,"assignee":{"id":"` + s.userID + `"},"expiresIn":` + expiresIn + `}`)
	}
	auth := []string{"Authorization", "Bearer " + s.token}
	for _, c := range []struct {
		name   string
		method string
		path   string
		body   []byte
		hdr    []string
		valid  bool
		status int
	}{
		{"data null is refused", "POST", "/cache/user", entry(`"k1"`, `"t"`, `null`, `null`), nil, false, 400},
		{"data false is accepted", "POST", "/cache/user", entry(`"k2"`, `"t"`, `false`, `null`), nil, true, 201},
		{"data an array is accepted", "POST", "/cache/user", entry(`"k3"`, `"t"`, `[1,"x",null]`, `null`), nil, true, 201},
		{"data an object with a null member is accepted", "POST", "/cache/user", entry(`"k3o"`, `"t"`, `{"a":null,"b":[{}]}`, `null`), nil, true, 201},
		{"a key with NUL is refused", "POST", "/cache/user", entry(`"k\u0000"`, `"t"`, `1`, `null`), nil, false, 400},
		{"a type with NUL is refused", "POST", "/cache/user", entry(`"k4"`, `"\u0000"`, `1`, `null`), nil, false, 400},
		{"a bare number for expiresIn is refused", "POST", "/cache/user", entry(`"k5"`, `"t"`, `1`, `"60"`), nil, false, 400},
		{"a zero expiresIn is refused", "POST", "/cache/user", entry(`"k5"`, `"t"`, `1`, `"0s"`), nil, false, 400},
		{"an unknown unit is refused", "POST", "/cache/user", entry(`"k5"`, `"t"`, `1`, `"2 fortnights"`), nil, false, 400},
		{"a sign is refused", "POST", "/cache/user", entry(`"k5"`, `"t"`, `1`, `"-1h"`), nil, false, 400},
		{"a non-breaking space around expiresIn is refused", "POST", "/cache/user", entry(`"k5"`, `"t"`, `1`, `"1h\u00a0"`), nil, false, 400},
		{"a compound expiresIn in capitals with spaces is accepted", "POST", "/cache/user", entry(`"k6"`, `"t"`, `1`, `" 1 Hour 30MIN\n"`), nil, true, 201},
		{"a decimal expiresIn is accepted", "POST", "/cache/user", entry(`"k7"`, `"t"`, `1`, `".5d"`), nil, true, 201},
		{"0.0 and a positive term are accepted", "POST", "/cache/user", entry(`"k8"`, `"t"`, `1`, `"0.0s 2ms"`), nil, true, 201},
		{"an unknown filter operator is refused", "GET", "/cache/user?filter=key||$nope||a", nil, nil, false, 400},
		{"an L form of an operator without one is refused", "GET", "/cache/user?filter=key||$gtL||a", nil, nil, false, 400},
		{"a filter value with a line break is accepted", "GET", "/cache/user?filter=key||$contL||a%0Ab", nil, nil, true, 200},
		{"an old operator name without $ is accepted", "GET", "/cache/user?filter=key||cont||a", nil, nil, true, 200},
		{"any X-Request-Id is accepted (and replaced)", "GET", "/healthz", nil, []string{"X-Request-Id", "not a valid id!"}, true, 200},
		{"a refresh without a body is a valid request answered 401", "POST", "/auth/refresh", nil, nil, true, 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hdr := c.hdr
			if strings.HasPrefix(c.path, "/cache/") {
				hdr = append(append([]string(nil), auth...), hdr...)
			}
			ct := ""
			if c.body != nil {
				ct = "application/json"
			}
			x := oasSend(t, c.method, s.url+c.path, ct, c.body, hdr...)
			x.reqBody = c.body
			if refused := s.check.docRefuses(t, x); refused == c.valid {
				t.Errorf("the document refuses the request: %v, want %v", refused, !c.valid)
			}
			if x.status != c.status {
				t.Errorf("the server answered %d, want %d: %s", x.status, c.status, x.body)
			}
			s.check.checkResponse(t, x)
			if c.hdr != nil && x.header.Get("X-Request-Id") == "not a valid id!" {
				t.Error("an unsuitable X-Request-Id was echoed")
			}
		})
	}
}

// Go's HTTP server refuses a header with a control character itself,
// in plain text, before any handler; the document describes that answer.
func TestTheServersOwnBadRequestMatchesTheDocument(t *testing.T) {
	t.Parallel()
	s := newOASGapStack(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\x01b\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	res, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("answer %d %q, want net/http's plain-text 400", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s.check.checkResponse(t, oasExchange{req: req, status: res.StatusCode, header: res.Header, body: body})
}

// Under the default configuration every cache operation needs a token:
// the document says so, with no anonymous alternative.
func TestCacheOperationsRequireATokenInTheDocument(t *testing.T) {
	t.Parallel()
	doc := oasLoad(t)
	for _, path := range []string{"/cache/{assignment}", "/cache/{assignment}/{id}", "/cache/{assignment}/events"} {
		for method, op := range doc.Paths.Value(path).Operations() {
			want := []map[string][]string{{"bearerAuth": {}}}
			got := []map[string][]string{}
			for _, r := range *op.Security {
				got = append(got, r)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: security %v, want %v", method, path, got, want)
			}
		}
	}
}
