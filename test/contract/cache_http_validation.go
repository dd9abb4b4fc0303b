package contract

import (
	"net/http"
	"strings"
	"testing"
)

func webValidationTests(t *testing.T, s *webSuite) {
	t.Run("each invalid field is a 400 naming it", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		long := strings.Repeat("é", 256)
		for _, c := range []struct {
			name, body string
			fields     []string
		}{
			{"key missing", `{"type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"key"}},
			{"key empty", `{"key":"","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"key"}},
			{"key too long", `{"key":"` + long + `","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"key"}},
			{"key a number", `{"key":5,"type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"key"}},
			{"key null", `{"key":null,"type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"key"}},
			{"type missing", `{"key":"k","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"type"}},
			{"type too long", `{"key":"k","type":"` + long + `","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"type"}},
			{"type an object", `{"key":"k","type":{},"data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"type"}},
			{"data missing", `{"key":"k","type":"t","assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"data"}},
			{"data null", `{"key":"k","type":"t","data":null,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"data"}},
			{"assignee missing", `{"key":"k","type":"t","data":1,"expiresIn":null}`, []string{"assignee"}},
			{"assignee a string", `{"key":"k","type":"t","data":1,"assignee":"` + who + `","expiresIn":null}`, []string{"assignee"}},
			{"assignee.id missing", `{"key":"k","type":"t","data":1,"assignee":{},"expiresIn":null}`, []string{"assignee.id"}},
			{"assignee.id not a UUID", `{"key":"k","type":"t","data":1,"assignee":{"id":"bob"},"expiresIn":null}`, []string{"assignee.id"}},
			{"assignee.id a number", `{"key":"k","type":"t","data":1,"assignee":{"id":7},"expiresIn":null}`, []string{"assignee.id"}},
			{"expiresIn a bare number", `{"key":"k","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":"10"}`, []string{"expiresIn"}},
			{"expiresIn a number", `{"key":"k","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":10}`, []string{"expiresIn"}},
			{"an unknown field", `{"key":"k","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null,"colour":"red"}`, []string{"colour"}},
			{"an unknown nested field", `{"key":"k","type":"t","data":1,"assignee":{"id":"` + who + `","name":"x"},"expiresIn":null}`, []string{"assignee.name"}},
			{"a server field sent back", `{"id":"` + who + `","key":"k","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"id"}},
			{"a repeated field", `{"key":"k","key":"k2","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"key"}},
			{"several problems at once", `{"key":1,"type":2,"data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`, []string{"key", "type"}},
		} {
			r := s.do(t, http.MethodPost, s.coll(), []byte(c.body))
			env := r.fail(t, http.StatusBadRequest, "", c.fields...)
			if t.Failed() {
				t.Logf("case %q", c.name)
			}
			if env.Message == "" {
				t.Errorf("%s: empty message", c.name)
			}
		}
		// 255 characters (not bytes) is the limit, inclusive.
		s.create(t, strings.Repeat("é", 255), strings.Repeat("t", 255), who, `1`, `null`)
	})

	t.Run("data over the data limit is a 400 naming data", func(t *testing.T) {
		t.Parallel()
		limit := s.target.MaxDataBytes
		if limit == 0 {
			limit = 256 << 10
		}
		body := webBody("big", "t", webUUID(), `"`+strings.Repeat("x", limit)+`"`, `null`)
		if int64(len(body)) >= s.bodyLimit() {
			t.Skip("the body limit is below the data limit")
		}
		s.do(t, http.MethodPost, s.coll(), body).fail(t, http.StatusBadRequest, "", "data")
		s.create(t, "fits", "t", webUUID(), `"`+strings.Repeat("x", limit-2)+`"`, `null`)
	})

	t.Run("malformed JSON bodies are 400", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		good := string(webBody("k", "t", who, `1`, `null`))
		for _, body := range []string{
			`{`, `{"key":}`, `{"key":"k",}`, `{"key" "k"}`, `{'key':'k'}`, `[]`, `"str"`, `null`, `42`,
			good + ` {"x":1}`, good + `x`, good + `}`, ` `, "\xef\xbb\xbf" + good,
		} {
			s.do(t, http.MethodPost, s.coll(), []byte(body)).fail(t, http.StatusBadRequest, "")
		}
		// Complete bodies whose data alone is not JSON.
		for _, data := range []string{
			`01`, `1.`, `.5`, `-`, `1e`, `+1`, `"\x"`, `"\u12"`, `tru`, `nul`, `NaN`, `Infinity`, `[1,]`, `{"a":1,}`,
			`{"a" 1}`, `{a:1}`, "\"tab\tinside\"", "\"\xff\xfe\"", `"unterminated`, `[`,
			strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		} {
			s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, data, `null`)).fail(t, http.StatusBadRequest, "")
		}
		s.do(t, http.MethodPost, s.coll(), []byte(good)).entry(t, http.StatusCreated)
		s.do(t, http.MethodPost, s.coll(), []byte{}).fail(t, http.StatusBadRequest, "")
	})
}

func (s *webSuite) bodyLimit() int64 {
	if s.target.BodyLimit > 0 {
		return s.target.BodyLimit
	}
	return 1 << 20
}
