package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

// loginProbe is a body of nullable strings, as the login body is.
type loginProbe struct {
	Username String `json:"username,nullable"`
	Password String `json:"password,nullable"`
}

var loginProbeTable = NewTable[loginProbe]()

// decodeStringObject decodes b by loginProbeTable, the values in the
// order of the members.
func decodeStringObject(b []byte, _ ...string) ([]string, error) {
	v, err := loginProbeTable.Decode(b)
	if err != nil {
		return nil, err
	}
	return []string{v.Username.Value, v.Password.Value}, nil
}

func TestDecodeStringObject(t *testing.T) {
	t.Parallel()
	names := []string{"username", "password"}
	for _, c := range []struct {
		name   string
		body   string
		want   []string
		fields []string // named in the error's details; nil when accepted
	}{
		{"both members are read", `{"username":"alice","password":"pw"}`, []string{"alice", "pw"}, nil},
		{"the order does not matter", `{"password":"pw","username":"alice"}`, []string{"alice", "pw"}, nil},
		{"a missing member is empty", `{"username":"alice"}`, []string{"alice", ""}, nil},
		{"null is absent", `{"username":null,"password":"pw"}`, []string{"", "pw"}, nil},
		{"an empty object is accepted", ` { } `, []string{"", ""}, nil},
		{"escapes are decoded", `{"username":"a\u00e9\n\"b\\","password":"\ud83d\ude00"}`, []string{"a\u00e9\n\"b\\", "\U0001F600"}, nil},
		{"a number is refused", `{"username":1,"password":"pw"}`, nil, []string{"username"}},
		{"an array is refused", `{"username":"a","password":["pw"]}`, nil, []string{"password"}},
		{"an object is refused", `{"username":{"a":1}}`, nil, []string{"username"}},
		{"a boolean is refused", `{"password":false}`, nil, []string{"password"}},
		{"an unknown member is refused", `{"username":"a","remember":true}`, nil, []string{"remember"}},
		{"a member given twice is refused", `{"username":"a","username":"b"}`, nil, []string{"username"}},
		{"a member given as null and as a string is refused", `{"username":null,"username":"b"}`, nil, []string{"username"}},
		{"a NUL character is refused", `{"username":"a\u0000b"}`, nil, []string{"username"}},
		{"every problem is named", `{"username":1,"password":2,"x":3}`, nil, []string{"username", "password", "x"}},
		{"an array body is refused", `[]`, nil, []string{"body"}},
		{"a string body is refused", `"alice"`, nil, []string{"body"}},
		{"trailing data is refused", `{"username":"a"} {}`, nil, []string{"body"}},
		{"a trailing NUL byte is refused", "{\"username\":\"a\"}\x00", nil, []string{"body"}},
		{"a truncated object is refused", `{"username":"a"`, nil, []string{"body"}},
		{"invalid UTF-8 is refused", "{\"username\":\"\xff\"}", nil, []string{"body"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeStringObject([]byte(c.body), names...)
			if c.fields == nil {
				if err != nil || !slices.Equal(got, c.want) {
					t.Errorf("got %q, %v; want %q", got, err, c.want)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
				t.Fatalf("got %q, %v; want a validation error", got, err)
			}
			var fields []string
			for _, d := range de.Details {
				fields = append(fields, d.Field)
			}
			for _, f := range c.fields {
				if !slices.Contains(fields, f) {
					t.Errorf("details name %v, want %s among them", fields, f)
				}
			}
		})
	}
}

// FuzzDecodeStringObject: the decoder of a body of nullable strings (the
// login and refresh bodies) never
// panics, refuses only with a validation error (a 400, never a 500), and
// accepts only a JSON object whose members are among the known names and
// are strings (or null), decoded as encoding/json decodes them.
func FuzzDecodeStringObject(f *testing.F) {
	for _, s := range []string{
		`{"username":"alice","password":"pw"}`, `{}`, `{"username":null}`, `{"password":1}`,
		`{"username":"a","username":"b"}`, `{"x":[1,{"y":null}]}`, `{"username":"\ud800"}`,
		`{"username":"\u0000"}`, `[]`, `  {"password":"p"}  `, `{"username":"a"`, "{\"username\":\"\xff\"}",
		`{"username":"a\\u00e9\"\\/\b\f\n\r\t"}`,
	} {
		f.Add([]byte(s))
	}
	names := []string{"username", "password"}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeStringObject(b, names...)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("%q: refused with %v, not a validation error", b, err)
			}
			return
		}
		if len(got) != len(names) {
			t.Fatalf("%q: %d values for %d names", b, len(got), len(names))
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(b, &members); err != nil || members == nil {
			t.Fatalf("%q: accepted, but encoding/json reads no object: %v", b, err)
		}
		for name, raw := range members {
			i := slices.Index(names, name)
			if i < 0 {
				t.Fatalf("%q: accepted the unknown member %q", b, name)
			}
			if bytes.Equal(raw, []byte("null")) {
				if got[i] != "" {
					t.Fatalf("%q: null %s read as %q", b, name, got[i])
				}
				continue
			}
			var want string
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("%q: accepted the non-string %s %s", b, name, raw)
			}
			if got[i] != want || strings.IndexByte(got[i], 0) >= 0 {
				t.Fatalf("%q: %s read as %q, encoding/json reads %q", b, name, got[i], want)
			}
		}
		for i, v := range got {
			if _, ok := members[names[i]]; !ok && v != "" {
				t.Fatalf("%q: the absent %s read as %q", b, names[i], v)
			}
		}
	})
}
