package contract

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// CacheHTTPTarget is one running cachegate the HTTP cache suite talks to.
//
// The service must serve at least one assignment with policy public and no
// default expiry; the suite sends no token. Other tests may use the same
// service meanwhile, as long as nothing but the suite moves its clock.
type CacheHTTPTarget struct {
	// BaseURL is the service's root, e.g. "http://127.0.0.1:8080", without
	// a trailing slash.
	BaseURL string
	// Assignments names one or more public assignments; with two or more
	// the suite also checks that assignments are separate stores.
	Assignments []string
	// Advance moves the service's clock forward. Nil means the service runs
	// on the real clock: the suite then waits for short real expiries
	// (about a second, polling at most a few seconds).
	Advance func(d time.Duration)
	// BodyLimit is the service's request body limit; zero means the
	// default, 1 MiB.
	BodyLimit int64
	// MaxDataBytes is the service's data limit; zero means the default,
	// 256 KiB.
	MaxDataBytes int
	// Client sends the requests; nil means a plain http.Client with a
	// timeout.
	Client *http.Client
	// QuotaAssignment, when set, names a public assignment whose
	// assignees may keep Quota (both limits set: at least 2 entries and 64
	// bytes, small enough to fill); the suite then checks the quota's
	// answers there.
	QuotaAssignment string
	Quota           domain.Quota
}

// CacheHTTPHarness starts (or points at) the service under test. The suite
// calls it once and shares the service among its subtests, which use
// assignees of their own so they never see each other's entries.
type CacheHTTPHarness func(t *testing.T) CacheHTTPTarget

// CacheHTTP runs the HTTP contract of the cache routes (docs/api.md,
// "Cache entries") and the HTTP conventions ("Conventions") that need no token:
// statuses, the error envelope, strict bodies, byte-exact data, expiry,
// conditional requests, lists, and never a 5xx for bad input.
func CacheHTTP(t *testing.T, h CacheHTTPHarness) {
	t.Helper()
	s := &webSuite{target: h(t)}
	if len(s.target.Assignments) == 0 {
		t.Fatal("the harness named no assignment")
	}
	s.client = s.target.Client
	if s.client == nil {
		s.client = &http.Client{Timeout: 30 * time.Second}
	}
	s.a = s.target.Assignments[0]
	// The clock-moving test runs first and alone; everything after it is
	// parallel and insensitive to the clock moving by a few seconds.
	webExpiryTests(t, s)
	webCreateTests(t, s)
	webValidationTests(t, s)
	webProtocolTests(t, s)
	webReadWriteTests(t, s)
	webConditionalTests(t, s)
	webListTests(t, s)
	webQueryTests(t, s)
	webRobustnessTests(t, s)
	webQuotaTests(t, s)
	webIdempotencyTests(t, s)
}

// webSuite carries the target through the subtests.
type webSuite struct {
	target CacheHTTPTarget
	client *http.Client
	a      string // the first assignment
}

// webReply is one answer.
type webReply struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request. body nil sends none; otherwise it is sent with
// Content-Type application/json unless hdr (name, value pairs) sets one.
func (s *webSuite) do(t *testing.T, method, path string, body []byte, hdr ...string) webReply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.target.BaseURL+path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		switch {
		case hdr[i] == "Content-Type" && hdr[i+1] == "":
			req.Header.Del("Content-Type")
		case hdr[i] == "Content-Type":
			req.Header.Set("Content-Type", hdr[i+1])
		default:
			req.Header.Add(hdr[i], hdr[i+1])
		}
	}
	return s.send(t, req)
}

func (s *webSuite) send(t *testing.T, req *http.Request) webReply {
	t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode >= 500 {
		t.Errorf("%s %s answered %d: %s", req.Method, req.URL.Path, resp.StatusCode, webShort(b))
	}
	return webReply{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func webShort(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// coll and item are the assignment's route paths.
func (s *webSuite) coll() string          { return "/cache/" + s.a }
func (s *webSuite) item(id string) string { return "/cache/" + s.a + "/" + id }

// webEntry is the suite's short name for Entry.
type webEntry = Entry

// Entry is a cache entry as the HTTP API returns it (docs/api.md,
// "Cache entries"), for tests that read answers.
type Entry struct {
	ID          string          `json:"id"`
	DateCreated string          `json:"dateCreated"`
	DateUpdated string          `json:"dateUpdated"`
	DateDeleted *string         `json:"dateDeleted"`
	Version     int             `json:"version"`
	Key         string          `json:"key"`
	Type        string          `json:"type"`
	Data        json.RawMessage `json:"data"`
	Assignee    struct {
		ID string `json:"id"`
	} `json:"assignee"`
	ExpirationDate *string `json:"expirationDate"`
}

var (
	webTimeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	webUUIDRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

var webEntryFields = []string{"assignee", "data", "dateCreated", "dateDeleted", "dateUpdated",
	"expirationDate", "id", "key", "type", "version"}

// entry checks that r has status and carries one well-formed entry, with
// an ETag naming its version, and returns it.
func (r webReply) entry(t *testing.T, status int) webEntry {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, webShort(r.Body))
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	e := webParseEntry(t, r.Body)
	if got, want := r.Header.Get("ETag"), fmt.Sprintf(`"%d"`, e.Version); got != want {
		t.Errorf("ETag %q, want %q", got, want)
	}
	return e
}

// webParseEntry decodes one entry and checks its shape: exactly the
// contract's fields, a UUID id, millisecond UTC times.
func webParseEntry(t *testing.T, b []byte) webEntry {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatalf("entry is not a JSON object: %v: %s", err, webShort(b))
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, webEntryFields) {
		t.Errorf("entry fields %v, want %v", keys, webEntryFields)
	}
	var e webEntry
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("entry fields have the wrong types: %v: %s", err, webShort(b))
	}
	if !webUUIDRE.MatchString(e.ID) {
		t.Errorf("id %q is not a lower-case UUID", e.ID)
	}
	for name, v := range map[string]*string{"dateCreated": &e.DateCreated, "dateUpdated": &e.DateUpdated,
		"dateDeleted": e.DateDeleted, "expirationDate": e.ExpirationDate} {
		if v != nil && !webTimeRE.MatchString(*v) {
			t.Errorf("%s %q is not RFC 3339 UTC with milliseconds", name, *v)
		}
	}
	return e
}

// webEnvelope is the error body.
type webEnvelope struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	ErrorCode  string `json:"errorCode"`
	Details    []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"details"`
}

// fail checks that r is an error answer with status, in the envelope,
// with errorCode code (any when empty) and a detail naming each field.
func (r webReply) fail(t *testing.T, status int, code string, fields ...string) webEnvelope {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %d, want %d: %s", r.Status, status, webShort(r.Body))
	}
	env := webParseEnvelope(t, r)
	if code != "" && env.ErrorCode != code {
		t.Errorf("errorCode %q, want %q", env.ErrorCode, code)
	}
	for _, f := range fields {
		if !slices.ContainsFunc(env.Details, func(d struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		}) bool {
			return d.Field == f
		}) {
			t.Errorf("no detail names field %q: %s", f, webShort(r.Body))
		}
	}
	return env
}

// webParseEnvelope checks the envelope's shape for any error answer.
func webParseEnvelope(t *testing.T, r webReply) webEnvelope {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type %q, want application/json", ct)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &fields); err != nil {
		t.Fatalf("error body is not a JSON object: %v: %s", err, webShort(r.Body))
	}
	for k := range fields {
		if k != "statusCode" && k != "message" && k != "errorCode" && k != "details" {
			t.Errorf("error body has the unexpected field %q", k)
		}
	}
	var env webEnvelope
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("error body has the wrong shape: %v: %s", err, webShort(r.Body))
	}
	if env.StatusCode != r.Status {
		t.Errorf("statusCode %d, want the HTTP status %d", env.StatusCode, r.Status)
	}
	if env.Message == "" || env.ErrorCode == "" {
		t.Errorf("message and errorCode must be non-empty: %s", webShort(r.Body))
	}
	for _, d := range env.Details {
		if d.Field == "" || d.Message == "" {
			t.Errorf("a detail lacks its field or message: %s", webShort(r.Body))
		}
	}
	return env
}

// webUUID returns a random (version 4) UUID, so every subtest has
// assignees of its own.
func webUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// webBody builds a POST/PUT body; expiresIn is raw JSON (`null`, `"1h"`).
func webBody(key, typ, assignee, data, expiresIn string) []byte {
	k, _ := json.Marshal(key)
	ty, _ := json.Marshal(typ)
	a, _ := json.Marshal(assignee)
	return []byte(fmt.Sprintf(`{"key":%s,"type":%s,"data":%s,"assignee":{"id":%s},"expiresIn":%s}`,
		k, ty, data, a, expiresIn))
}

// create POSTs an entry that must be created.
func (s *webSuite) create(t *testing.T, key, typ, assignee, data, expiresIn string) webEntry {
	t.Helper()
	return s.do(t, http.MethodPost, s.coll(), webBody(key, typ, assignee, data, expiresIn)).entry(t, http.StatusCreated)
}

// webTime parses a returned timestamp.
func webTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %q: %v", s, err)
	}
	return v
}

// pause lets the service's clock move on by at least d, by advancing it
// or, on the real clock, by waiting.
func (s *webSuite) pause(d time.Duration) {
	if s.target.Advance != nil {
		s.target.Advance(d)
		return
	}
	time.Sleep(d)
}
