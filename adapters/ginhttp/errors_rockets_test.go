package ginhttp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

// rocketsError is the shape Rockets clients parse from a 400.
type rocketsError struct {
	StatusCode int `json:"statusCode"`
	Message    []struct {
		Property    string            `json:"property"`
		Constraints map[string]string `json:"constraints"`
	} `json:"message"`
	Error     string `json:"error"`
	ErrorCode string `json:"errorCode"`
}

func TestRocketsErrorFormatRendersValidationErrorsAsRocketsClientsParse(t *testing.T) {
	t.Parallel()
	base := newFixture(t, func(o *ginhttp.Options) { o.ErrorFormat = ginhttp.ErrorFormatRockets }).listen(t)
	const who = `"assignee":{"id":"bb0f22c1-41ff-471a-877c-6021b72ac2ee"}`
	for _, c := range []struct {
		name, method, path, body string
		property, rule           string
	}{
		{"a missing key", "POST", "/cache/user", `{"type":"t","data":1,` + who + `}`, "key", "isNotEmpty"},
		{"a key that is not a string", "POST", "/cache/user", `{"key":1,"type":"t","data":1,` + who + `}`, "key", "isString"},
		{"an unknown member", "POST", "/cache/user", `{"key":"k","type":"t","data":1,"x":2,` + who + `}`, "x", "whitelistValidation"},
		{"an assignee id that is no UUID", "POST", "/cache/user", `{"key":"k","type":"t","data":1,"assignee":{"id":"nope"}}`, "assignee.id", "isUuid"},
		{"an unknown filter operator", "GET", "/cache/user?filter=key||$nope||a", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, _, body := do(t, c.method, base+c.path, c.body)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			var e rocketsError
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("not the Rockets shape (message an array of objects): %v: %s", err, body)
			}
			if e.StatusCode != 400 || e.Error != "Bad Request" || e.ErrorCode != "VALIDATION_FAILED" || len(e.Message) == 0 {
				t.Fatalf("envelope %+v: %s", e, body)
			}
			for _, m := range e.Message {
				if m.Property == "" || len(m.Constraints) == 0 {
					t.Fatalf("item %+v lacks a property or constraints: %s", m, body)
				}
			}
			if c.property == "" {
				return
			}
			for _, m := range e.Message {
				if m.Property == c.property {
					if m.Constraints[c.rule] == "" {
						t.Fatalf("property %s: constraints %v, want the rule %s: %s", c.property, m.Constraints, c.rule, body)
					}
					return
				}
			}
			t.Fatalf("no item for property %s: %s", c.property, body)
		})
	}
}

func TestRocketsErrorFormatLeavesOtherErrorsAlone(t *testing.T) {
	t.Parallel()
	base := newFixture(t, func(o *ginhttp.Options) { o.ErrorFormat = ginhttp.ErrorFormatRockets }).listen(t)
	for _, c := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"an unknown entry", "GET", "/cache/user/01a21b5e-9954-7e4e-9eb9-6cf333a1f290", "", 404},
		{"an unknown route", "GET", "/nope", "", 404},
		{"an unsupported media type", "POST", "/cache/user", "", 415},
	} {
		var hdr []string
		if c.status == 415 {
			hdr = []string{"Content-Type", "text/plain"}
			c.body = "{}"
		}
		status, _, body := do(t, c.method, base+c.path, c.body, hdr...)
		var e struct {
			Message   string `json:"message"`
			ErrorCode string `json:"errorCode"`
		}
		if status != c.status || json.Unmarshal([]byte(body), &e) != nil || e.Message == "" || e.ErrorCode == "" {
			t.Errorf("%s: %d %s, want %d in cachegate's envelope (message a string)", c.name, status, body, c.status)
		}
	}
}

func TestDefaultErrorFormatKeepsMessageAString(t *testing.T) {
	t.Parallel()
	base := newFixture(t, nil).listen(t)
	status, _, body := do(t, "POST", base+"/cache/user", `{"type":"t","data":1}`)
	var e struct {
		Message string `json:"message"`
		Details []struct {
			Field string `json:"field"`
		} `json:"details"`
	}
	if status != 400 || json.Unmarshal([]byte(body), &e) != nil || e.Message == "" || len(e.Details) == 0 {
		t.Fatalf("%d %s: want 400 with message a string and details", status, body)
	}
}

func TestUnknownErrorFormatIsRefused(t *testing.T) {
	t.Parallel()
	if _, err := ginhttp.New(ginhttp.Options{ErrorFormat: "nestjs"}); err == nil {
		t.Fatal("New accepted ErrorFormat nestjs")
	}
}
