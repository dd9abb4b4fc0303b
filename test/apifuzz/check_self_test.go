package apifuzz_test

import (
	"net/http"
	"strings"
	"testing"
)

// These tests hold the checks themselves to account: each exchange below
// is made up, and the check it names must report it (or, for the last
// cases, must not).
func TestChecksReportWhatTheyClaimTo(t *testing.T) {
	t.Parallel()
	f := newFuzzer(t, &target{addr: "127.0.0.1:1", userID: "0190a000-0000-7000-8000-000000000001"}, 1)
	f.st.access = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln"
	f.st.adminAccess = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhIn0.c2ln"
	f.red.add(f.st.access, "<an access token>")
	f.red.add(f.st.adminAccess, "<an access token>")
	jsonAnswer := func(status int, body string) answer {
		return answer{status: status, body: []byte(body), header: http.Header{
			"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"r1"}, "Etag": {`"1"`}}}
	}
	entry := `{"id":"0190a000-0000-7000-8000-000000000002","dateCreated":"2026-11-25T10:00:00Z","dateUpdated":"2026-11-25T10:00:00Z",` +
		`"dateDeleted":null,"version":1,"key":"k","type":"t","data":1,"assignee":{"id":"0190a000-0000-7000-8000-000000000001"},"expirationDate":null}`
	valid := func() *request {
		return &request{op: f.ops["getCacheEntry"], auth: authValid,
			path: map[string]string{"assignment": "user", "id": "0190a000-0000-7000-8000-000000000002"}}
	}
	for _, tc := range []struct {
		name  string
		req   func() *request
		ans   answer
		check string // "" when no check may report
	}{
		{"a 500 is a server error", valid, jsonAnswer(500, `{"statusCode":500,"message":"x","errorCode":"INTERNAL"}`), checkServerError},
		{"an undocumented status is reported", valid, jsonAnswer(418, `{"statusCode":418,"message":"x","errorCode":"TEAPOT"}`), checkStatus},
		{"an undocumented media type is reported", valid,
			answer{status: 200, header: http.Header{"Content-Type": {"text/html"}}, body: []byte("<p>")}, checkContentType},
		{"an answer off its schema is reported", valid, jsonAnswer(200, `{"id":"not-a-uuid"}`), checkSchema},
		{"a valid request refused with 400 is reported", valid,
			jsonAnswer(400, `{"statusCode":400,"message":"x","errorCode":"VALIDATION_FAILED"}`), checkPositive},
		{"an invalid request answered 200 is reported", func() *request {
			r := valid()
			r.path["id"], r.mutation = "not-a-uuid", "path id: not a uuid"
			return r
		}, jsonAnswer(200, entry), checkNegative},
		{"a required token ignored is reported", func() *request {
			return &request{op: f.ops["logout"], auth: authNone}
		}, answer{status: 204, header: http.Header{}}, checkAuth},
		{"an admin operation answering a user who is not an admin is reported", func() *request {
			return &request{op: f.ops["adminListKeys"], auth: authNonAdmin}
		}, jsonAnswer(200, `{"data":[]}`), checkAuth},
		{"the admin refused with 403 is reported", func() *request {
			return &request{op: f.ops["adminListKeys"], auth: authValid}
		}, jsonAnswer(403, `{"statusCode":403,"message":"Forbidden","errorCode":"FORBIDDEN"}`), checkPositive},
		{"a user who is not an admin refused with 403 passes", func() *request {
			return &request{op: f.ops["adminListKeys"], auth: authNonAdmin}
		}, jsonAnswer(403, `{"statusCode":403,"message":"Forbidden","errorCode":"FORBIDDEN"}`), ""},
		{"a wrong current password refused with 401 passes", func() *request {
			return &request{op: f.ops["changePassword"], auth: authValid, hasBody: true, contentType: "application/json",
				body: []byte(`{"currentPassword":"not it at all","newPassword":"long enough"}`)}
		}, answer{status: 401, body: []byte(`{"statusCode":401,"message":"Unauthorized","errorCode":"UNAUTHORIZED"}`), header: http.Header{
			"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"r1"}, "Www-Authenticate": {"Bearer"}}}, ""},
		{"a documented answer to a valid request passes", valid, jsonAnswer(200, entry), ""},
		{"404 for an id nobody has passes", valid,
			jsonAnswer(404, `{"statusCode":404,"message":"x","errorCode":"CACHE_ENTITY_NOT_FOUND"}`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req()
			req, err := r.httpRequest("http://"+f.tgt.addr, f.tokenFor(r))
			if err != nil {
				t.Fatal(err)
			}
			found := f.checkExchange(r, req, tc.ans, f.verdict(r, req))
			var checks []string
			for _, fd := range found {
				checks = append(checks, fd.check)
			}
			if tc.check == "" && len(found) > 0 {
				t.Errorf("reported %v, want nothing", found)
			}
			if tc.check != "" && !strings.Contains(strings.Join(checks, " "), tc.check) {
				t.Errorf("checks reported %v, want %s", checks, tc.check)
			}
			if d := f.describe(r, tc.ans); strings.Contains(d, f.st.access) || strings.Contains(d, f.st.adminAccess) {
				t.Error("the report shows the access token")
			}
		})
	}
}

func TestAKnownGapCoversEveryPartOfACause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fd    finding
		known bool
	}{
		{finding{op: "createCacheEntry", check: checkPositive, cause: "400 VALIDATION_FAILED expiresIn: must be at most 100 years"}, true},
		{finding{op: "createCacheEntry", check: checkPositive, cause: "400 VALIDATION_FAILED data: must not be null; expiresIn: must be at most 100 years"}, false},
		{finding{op: "createCacheEntry", check: checkPositive, cause: "400 VALIDATION_FAILED expiresIn: needs a unit, such as"}, false},
		{finding{op: "listCacheEntries", check: checkPositive, cause: "400 VALIDATION_FAILED page: is too large"}, false},
		{finding{op: "listCacheEntries", check: checkPositive, cause: "400 VALIDATION_FAILED or: dateCreated: <value> is outside the years 0001 to 9999"}, true},
		{finding{op: "listCacheEntries", check: checkPositive, cause: "400 VALIDATION_FAILED filter: dateCreated: <value> is not an RFC 3339 date-time"}, false},
		{finding{op: "adminListUsers", check: checkPositive, cause: "400 VALIDATION_FAILED filter: dateCreated: <value> is outside the years 0001 to 9999"}, true},
		{finding{op: "adminAudit", check: checkPositive, cause: "400 VALIDATION_FAILED since: time: <value> is outside the years 0001 to 9999"}, true},
		{finding{op: "adminAudit", check: checkPositive, cause: "400 VALIDATION_FAILED since: time: <value> is not an RFC 3339 date-time"}, false},
		{finding{op: "healthz", check: checkPositive, cause: "401 UNAUTHORIZED "}, false},
		{finding{op: "healthz", check: checkServerError, cause: "500"}, false},
	} {
		if got := knownGap(tc.fd) != ""; got != tc.known {
			t.Errorf("knownGap(%+v) known = %v, want %v", tc.fd, got, tc.known)
		}
	}
}
