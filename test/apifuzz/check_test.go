package apifuzz_test

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// The checks, named as Schemathesis names them.
const (
	checkServerError   = "not_a_server_error"
	checkStatus        = "status_code_conformance"
	checkContentType   = "content_type_conformance"
	checkSchema        = "response_schema_conformance"
	checkNegative      = "negative_data_rejection"  // invalid input answered below 400
	checkPositive      = "positive_data_acceptance" // valid input refused (4xx), see allowedRefusal
	checkAuth          = "ignored_auth"
	checkAvailability  = "ensure_resource_availability" // stateful: a created entry reads back
	checkUseAfterFree  = "use_after_free"               // stateful: a deleted entry, a logged-out refresh token
	checkNoAnswer      = "an_answer"                    // the server answers, within answerWait
	checkStatefulSteps = "stateful_step"                // a step of the stateful pass answered as the document promises
)

// finding is one disagreement between the server and the document.
type finding struct {
	op, check, cause string
	report           string
}

// checkExchange applies every stateless check to one exchange. validErr
// is the document's verdict on the request (nil: valid).
func (f *fuzzer) checkExchange(r *request, req *http.Request, a answer, validErr error) []finding {
	var out []finding
	add := func(check, cause string) {
		out = append(out, finding{op: r.op.id, check: check, cause: cause})
	}
	if a.status >= 500 && !(f.outage && a.status == http.StatusServiceUnavailable) {
		add(checkServerError, fmt.Sprintf("%d", a.status))
	}
	ref := r.op.op.Responses.Status(a.status)
	if ref == nil {
		add(checkStatus, fmt.Sprintf("%d undocumented, %s", a.status, refusalCause(a)))
	} else {
		content := ref.Value.Content
		mt, _, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
		switch {
		case len(content) == 0 && len(a.body) > 0:
			add(checkContentType, fmt.Sprintf("%d with a body (%s) where none is documented", a.status, mt))
		case len(content) > 0 && content.Get(mt) == nil:
			add(checkContentType, fmt.Sprintf("%d %s undocumented", a.status, mt))
		default:
			opts := *f.opts
			opts.ExcludeResponseBody = a.stream
			in := &openapi3filter.ResponseValidationInput{
				RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: f.route(req), Options: &opts},
				Status:                 a.status, Header: a.header, Options: &opts,
			}
			if in.RequestValidationInput.Route != nil {
				if err := openapi3filter.ValidateResponse(context.Background(), in.SetBodyBytes(a.body)); err != nil {
					add(checkSchema, fmt.Sprintf("%d: %s", a.status, firstLine(err.Error())))
				}
			}
		}
	}
	switch {
	case validErr != nil && a.status < 400:
		cause := r.mutation
		if cause == "" {
			cause = "the document refuses: " + firstLine(validErr.Error())
		}
		add(checkNegative, cause)
	case validErr == nil && a.status >= 400 && a.status < 500 && !f.allowedRefusal(r, a):
		// One finding per field the refusal names: each is a
		// disagreement of its own, known or not.
		prefix, parts := splitCause(refusalCause(a))
		for _, part := range parts {
			add(checkPositive, prefix+part)
		}
	}
	if r.auth == authNonAdmin && !(a.status == http.StatusForbidden && errorCode(a) == "FORBIDDEN") && !(a.status == http.StatusBadRequest && errorCode(a) == "") {
		// docs/admin.md: 403 FORBIDDEN on every /admin route, before the
		// request's body or parameters are looked at (only net/http's own
		// 400 for a malformed request comes earlier).
		add(checkAuth, "with the token of a user who is not an admin: "+refusalCause(a))
	}
	if r.op.bearer && r.auth == authGarbage && !f.authRefusal(r, a) {
		add(checkAuth, "with a bearer value that is no token: "+refusalCause(a))
	}
	if r.op.bearer && !r.op.anonymous && r.auth == authNone && !f.authRefusal(r, a) {
		add(checkAuth, "without the token the operation requires: "+refusalCause(a))
	}
	return out
}

// authRefusal reports whether a, the answer to a request without a usable
// credential, is as it must be: 401; or a refusal that comes before the
// credential is looked at: 404 for an unknown assignment ("whoever asks",
// the assignment parameter's description), net/http's own 400 for a
// malformed header (before any handler), or a 4xx for another defect the
// generator put in the request.
func (f *fuzzer) authRefusal(r *request, a answer) bool {
	switch {
	case a.status == http.StatusUnauthorized:
		return true
	case a.status < 400 || a.status >= 500:
		return false
	case a.status == http.StatusNotFound && errorCode(a) == "CACHE_ASSIGNMENT_NOT_FOUND":
		return true
	case a.status == http.StatusBadRequest && errorCode(a) == "":
		return true
	}
	return r.mutation != "" && r.mutation != "no credential"
}

// allowedRefusal lists the 4xx answers a request valid per the document
// may still get, because they depend on the server's state or on the
// credentials, not on the request's form; each only where the operation
// documents that status:
//
//   - 401 with a bearer value that is no token, or on login, refresh and
//     token refresh, whose body carries a credential the server may not
//     know (a drawn username, password or refresh token), or on
//     changePassword, whose drawn currentPassword is not the user's
//     (docs/admin.md, "Self-service");
//   - 403: the caller may not do this (an assignee other than the caller
//     under the default owner policy, a user no longer active, a route
//     for administrators asked by a user who is not one), which depends on
//     who asks, not on the form; never to the admin's own token on an
//     admin operation;
//   - 404 on an operation with a path parameter (an unknown assignment, a
//     drawn id);
//   - 409 (a drawn key another entry already has);
//   - 412 when the request carries If-Match or If-None-Match;
//   - 422 QUERY_TOO_EXPENSIVE (the query bound, README "Fair share"),
//     and 422 IDEMPOTENCY_KEY_REUSED (a drawn Idempotency-Key an
//     earlier case sent with another body);
//   - 429 (a per-caller cap).
//
// Every other 4xx (400, 413, 415, 431, 401 without a token where the
// document admits anonymous access, …) refuses input the document calls
// valid: a finding.
func (f *fuzzer) allowedRefusal(r *request, a answer) bool {
	if r.op.op.Responses.Status(a.status) == nil {
		return false
	}
	switch a.status {
	case 401:
		return r.auth == authGarbage || slices.Contains([]string{"login", "refresh", "tokenRefresh", "changePassword"}, r.op.id)
	case 403:
		return !(r.op.admin && r.auth == authValid)
	case 404:
		return strings.Contains(r.op.path, "{")
	case 409, 429:
		return true
	case 412:
		return r.has("If-Match") || r.has("If-None-Match")
	case 422:
		return errorCode(a) == "QUERY_TOO_EXPENSIVE" || errorCode(a) == "IDEMPOTENCY_KEY_REUSED"
	}
	return false
}

// errorBody is the Error envelope, as far as the causes need it.
type errorBody struct {
	ErrorCode string `json:"errorCode"`
	Details   []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"details"`
}

func errorCode(a answer) string {
	var e errorBody
	_ = json.Unmarshal(a.body, &e)
	return e.ErrorCode
}

// refusalCause names an error answer by what the server said: status,
// errorCode and, for each field its details name, the message with its
// quoted values replaced by <value> and cut at the first parenthesis,
// operator and field names replaced (so causes group); or the media type
// when it is not the Error envelope.
func refusalCause(a answer) string {
	var e errorBody
	if err := json.Unmarshal(a.body, &e); err != nil || e.ErrorCode == "" {
		mt, _, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
		return fmt.Sprintf("%d %s", a.status, mt)
	}
	var fields []string
	for _, d := range e.Details {
		msg := quotedValue.ReplaceAllString(strings.TrimPrefix(d.Message, d.Field+": "), "<value>")
		if i := strings.IndexAny(msg, `"(`); i >= 0 {
			msg = msg[:i]
		}
		msg = operatorName.ReplaceAllString(strings.TrimSpace(msg), "$$op")
		fields = append(fields, d.Field+": "+fieldName.ReplaceAllString(msg, "<field> $$op"))
	}
	slices.Sort(fields)
	return fmt.Sprintf("%d %s %s", a.status, e.ErrorCode, strings.Join(slices.Compact(fields), "; "))
}

var (
	quotedValue  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	operatorName = regexp.MustCompile(`\$[A-Za-z]+`)
	fieldName    = regexp.MustCompile(`^[\w.]+ \$op`)
)

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return clip(s)
}
