package ginhttp

import (
	"net/http"
	"strings"
	"testing"
)

func TestIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		values []string
		want   string // "" with ok: absent
		ok     bool
	}{
		{"absent", nil, "", true},
		{"a structured-field string", []string{`"8e03978e-40d5"`}, "8e03978e-40d5", true},
		{"escapes in a string", []string{`"a\"b\\c d"`}, `a"b\c d`, true},
		{"a bare token", []string{"abc-123_~:/="}, "abc-123_~:/=", true},
		{"surrounding blanks", []string{"  \"k\"\t"}, "k", true},
		{"255 bytes", []string{strings.Repeat("k", 255)}, strings.Repeat("k", 255), true},
		{"256 bytes", []string{strings.Repeat("k", 256)}, "", false},
		{"an empty string", []string{`""`}, "", false},
		{"an empty value", []string{""}, "", false},
		{"two field lines", []string{"a", "b"}, "", false},
		{"an unterminated string", []string{`"abc`}, "", false},
		{"text after the string", []string{`"a" b`}, "", false},
		{"a bad escape", []string{`"a\x"`}, "", false},
		{"a blank in a token", []string{"a b"}, "", false},
		{"a list", []string{"a,b"}, "", false},
		{"non-ASCII", []string{"caf\u00e9"}, "", false},
		{"a control character in a string", []string{"\"a\x01\""}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for _, v := range c.values {
				h.Add(idempotencyHeader, v)
			}
			k, err := idempotencyKey(h)
			switch {
			case !c.ok && err == nil:
				t.Fatalf("accepted %q as %+v", c.values, k)
			case c.ok && err != nil:
				t.Fatalf("refused %q: %v", c.values, err)
			case c.ok && c.want == "" && k != nil:
				t.Fatalf("an absent header gave %+v", k)
			case c.ok && c.want != "" && (k == nil || k.Key != c.want):
				t.Fatalf("key %+v, want %q", k, c.want)
			}
		})
	}
}
