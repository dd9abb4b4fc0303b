package ginhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

const goodBody = `{"key":"k","type":"t","data":{"a": [1, 2.5e3]},"assignee":{"id":"a11ce000-0000-4000-8000-000000000001"},"expiresIn":"1h"}`

func TestDecodeCacheBody(t *testing.T) {
	t.Parallel()
	t.Run("a full body decodes with data byte for byte", func(t *testing.T) {
		t.Parallel()
		b, err := decodeCacheBody([]byte(goodBody))
		if err != nil {
			t.Fatal(err)
		}
		if b.Key.Value != "k" || b.Type.Value != "t" || string(b.Data.Value) != `{"a": [1, 2.5e3]}` ||
			b.Assignee.ID.Value != "a11ce000-0000-4000-8000-000000000001" || b.ExpiresIn.Value == nil || *b.ExpiresIn.Value != "1h" ||
			!b.Key.Given || !b.Type.Given || !b.Data.Given || !b.Assignee.Given || !b.Assignee.ID.Given || !b.ExpiresIn.Given {
			t.Errorf("decoded %+v", b)
		}
	})

	t.Run("anything after the object, a NUL byte included, is refused", func(t *testing.T) {
		t.Parallel()
		for _, tail := range []string{"\x00", " {}", "x", " \x00 "} {
			if _, err := decodeCacheBody([]byte(goodBody + tail)); err == nil {
				t.Errorf("body followed by %q was accepted", tail)
			}
		}
		if _, err := decodeCacheBody([]byte(goodBody + " \n\t")); err != nil {
			t.Errorf("trailing white space refused: %v", err)
		}
	})

	t.Run("escapes in strings are decoded as encoding/json does", func(t *testing.T) {
		t.Parallel()
		for raw, want := range map[string]string{
			`"a\"b\\c\/d"`:         `a"b\c/d`,
			`"\b\f\n\r\t"`:         "\b\f\n\r\t",
			`"\u00e9\u2028"`:       "é\u2028",
			`"\ud83d\ude00"`:       "😀",
			`"\ud800x"`:            "\ufffdx",
			`"\ude00\ud83d"`:       "\ufffd\ufffd",
			`"\ud83d\u0041"`:       "\ufffdA",
			`"plain ✓"`:            "plain ✓",
			`"\ud83d\ude00\ud83d"`: "😀\ufffd",
		} {
			b, err := decodeCacheBody([]byte(`{"key":` + raw + `}`))
			if err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			var std string
			_ = json.Unmarshal([]byte(raw), &std)
			if b.Key.Value != want || b.Key.Value != std {
				t.Errorf("%s decoded to %q, want %q (encoding/json: %q)", raw, b.Key.Value, want, std)
			}
		}
	})

	t.Run("PATCH presence: absent, null and a value are told apart", func(t *testing.T) {
		t.Parallel()
		b, _ := decodeCacheBody([]byte(`{}`))
		if b.ExpiresIn.Given || b.Key.Given || b.Data.Given {
			t.Errorf("empty object: %+v", b)
		}
		b, _ = decodeCacheBody([]byte(`{"expiresIn":null}`))
		if !b.ExpiresIn.Given || b.ExpiresIn.Value != nil {
			t.Errorf("expiresIn null: %+v", b)
		}
		p, err := toCachePatch(b)
		if err != nil || !p.ExpiresInSet || p.ExpiresIn != nil || p.Key != nil || p.Data != nil {
			t.Errorf("patch %+v %v", p, err)
		}
	})

	t.Run("problems name their fields", func(t *testing.T) {
		t.Parallel()
		for body, want := range map[string][]string{
			`{"key":1}`:                              {"key"},
			`{"key":"a","key":"b"}`:                  {"key"},
			`{"type":[]}`:                            {"type"},
			`{"data":null}`:                          {"data"},
			`{"assignee":"x"}`:                       {"assignee"},
			`{"assignee":{"id":1,"x":2}}`:            {"assignee.id", "assignee.x"},
			`{"expiresIn":3600}`:                     {"expiresIn"},
			`{"expiresIn":true}`:                     {"expiresIn"},
			`{"nope":1,"Key":"k"}`:                   {"nope", "Key"},
			`{"key":"a\u0000b"}`:                     {"key"},
			`{"` + strings.Repeat("n", 200) + `":1}`: {strings.Repeat("n", web.MaxNameInError) + "…"},
		} {
			_, err := decodeCacheBody([]byte(body))
			if got := fieldsOf(err); !equalStrings(got, want) {
				t.Errorf("%.40s: fields %v, want %v (%v)", body, got, want, err)
			}
		}
	})

	t.Run("at most web.MaxProblems problems are listed", func(t *testing.T) {
		t.Parallel()
		var sb strings.Builder
		sb.WriteString("{")
		for i := range 100 {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(`"f` + strings.Repeat("x", i) + `":1`)
		}
		sb.WriteString("}")
		_, err := decodeCacheBody([]byte(sb.String()))
		if n := len(fieldsOf(err)); n != web.MaxProblems {
			t.Errorf("%d problems listed, want %d", n, web.MaxProblems)
		}
	})

	t.Run("malformed or non-object bodies are a body problem", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{``, ` `, `[]`, `"s"`, `1`, `null`, `{`, `{"key"}`, `{"key":"k"}x`,
			`{"key":"k"}{}`, `{"data":[1,]}`, `{"data":` + strings.Repeat("[", web.MaxDepth+1) + strings.Repeat("]", web.MaxDepth+1) + `}`,
			`{"data":"\u00zz"}`, `{"data":-}`, `{"data":1e+}`, `{"data":"a` + "\x01" + `"}`, `{"key":"k",}`, `{,}`,
			`{"assignee":{"id":"x",}}`, `{"assignee":{"id" "x"}}`, `{"expiresIn":nul}`} {
			_, err := decodeCacheBody([]byte(body))
			if got := fieldsOf(err); !equalStrings(got, []string{"body"}) {
				t.Errorf("%.40q: fields %v, want [body] (%v)", body, got, err)
			}
		}
	})
}

func fieldsOf(err error) []string {
	var de *domain.Error
	if !errors.As(err, &de) {
		return nil
	}
	out := []string{}
	for _, d := range de.Details {
		out = append(out, d.Field)
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzDecodeCacheBody checks that no input panics, that the decoder never
// accepts what encoding/json finds invalid, and that an accepted body
// yields exactly what encoding/json reads from it.
func FuzzDecodeCacheBody(f *testing.F) {
	for _, s := range []string{goodBody, `{}`, `{"data":"\ud83d\ude00"}`, `{"expiresIn":null}`, `{"key":1}`,
		`{"assignee":{"id":"x"}}`, `[1]`, `{"data":[{"a":[]},-0.1e-5,true,null]}`, `{"key":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dto, err := decodeCacheBody(b)
		valid := json.Valid(b) && utf8.Valid(b)
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Details) == 0 {
				t.Fatalf("rejection is not a validation error with details: %#v", err)
			}
			return
		}
		if !valid {
			t.Fatalf("accepted a body encoding/json rejects: %q", b)
		}
		var std struct {
			Key, Type *string
			Data      json.RawMessage
			Assignee  *struct{ ID *string }
			ExpiresIn *string
		}
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("accepted a body encoding/json cannot read: %v", err)
		}
		if dto.Key.Given && (std.Key == nil || *std.Key != dto.Key.Value) || dto.Type.Given && (std.Type == nil || *std.Type != dto.Type.Value) {
			t.Fatalf("strings differ from encoding/json's: %+v", dto)
		}
		if dto.Data.Given && (!json.Valid(dto.Data.Value) || !bytes.Equal(bytes.TrimSpace(std.Data), dto.Data.Value) || string(dto.Data.Value) == "null") {
			t.Fatalf("data %q differs from encoding/json's %q", dto.Data.Value, std.Data)
		}
		if dto.Assignee.ID.Given && (std.Assignee == nil || std.Assignee.ID == nil || *std.Assignee.ID != dto.Assignee.ID.Value) {
			t.Fatalf("assignee.id %q differs", dto.Assignee.ID.Value)
		}
		if dto.ExpiresIn.Given && (dto.ExpiresIn.Value == nil) != (std.ExpiresIn == nil) {
			t.Fatalf("expiresIn presence differs")
		}
		for _, s := range []string{dto.Key.Value, dto.Type.Value, dto.Assignee.ID.Value} {
			if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 && s != dto.Assignee.ID.Value {
				t.Fatalf("accepted string %q", s)
			}
		}
	})
}

func BenchmarkDecodeCacheBody(b *testing.B) {
	body := []byte(`{"key":"session","type":"web","data":"` + strings.Repeat("x", 200) +
		`","assignee":{"id":"a11ce000-0000-4000-8000-000000000001"},"expiresIn":"15m"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		dto, err := decodeCacheBody(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := toCacheInput(dto); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeCacheBodyStdlib is the yardstick: encoding/json into a
// DTO of raw messages, without the strictness checks.
func BenchmarkDecodeCacheBodyStdlib(b *testing.B) {
	body := []byte(`{"key":"session","type":"web","data":"` + strings.Repeat("x", 200) +
		`","assignee":{"id":"a11ce000-0000-4000-8000-000000000001"},"expiresIn":"15m"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var dto struct {
			Key, Type string
			Data      json.RawMessage
			Assignee  struct{ ID string }
			ExpiresIn *string
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&dto); err != nil {
			b.Fatal(err)
		}
	}
}

// decodeCacheBody decodes a cache body strictly (web.Table): UTF-8,
// exactly one JSON object; members key, type (strings), data (any JSON
// value but null), assignee (an object with the string member id) and
// expiresIn (a string or null). The returned Data aliases b.
func decodeCacheBody(b []byte) (cacheBody, error) {
	return cacheBodyTable.Decode(b)
}
