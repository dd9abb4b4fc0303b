package ginhttp

import (
	"errors"
	"strings"
	"testing"
)

func TestParseBearer(t *testing.T) {
	t.Parallel()
	jwt := "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
	for _, c := range []struct {
		name   string
		values []string
		tok    string
		err    error
	}{
		{"no header is no token", nil, "", errNoBearer},
		{"a JWT is read", []string{"Bearer " + jwt}, jwt, nil},
		{"the scheme is case-insensitive", []string{"bEaReR " + jwt}, jwt, nil},
		{"several spaces may separate scheme and token", []string{"Bearer    abc"}, "abc", nil},
		{"token68 padding is allowed", []string{"Bearer ab+/c~_-.=="}, "ab+/c~_-.==", nil},
		{"an empty header is malformed", []string{""}, "", errMalformedBearer},
		{"the scheme alone is malformed", []string{"Bearer"}, "", errMalformedBearer},
		{"the scheme and spaces are malformed", []string{"Bearer   "}, "", errMalformedBearer},
		{"another scheme is malformed", []string{"Basic dXNlcjpwYXNz"}, "", errMalformedBearer},
		{"a scheme glued to the token is malformed", []string{"Bearerabc"}, "", errMalformedBearer},
		{"a tab separator is malformed", []string{"Bearer\tabc"}, "", errMalformedBearer},
		{"a space inside the token is malformed", []string{"Bearer abc def"}, "", errMalformedBearer},
		{"padding alone is malformed", []string{"Bearer =="}, "", errMalformedBearer},
		{"padding in the middle is malformed", []string{"Bearer ab=cd"}, "", errMalformedBearer},
		{"a quote is malformed", []string{`Bearer "abc"`}, "", errMalformedBearer},
		{"two headers are malformed", []string{"Bearer a", "Bearer b"}, "", errMalformedBearer},
		{"8 KiB of token is accepted", []string{"Bearer " + strings.Repeat("a", MaxBearerTokenLen)}, strings.Repeat("a", MaxBearerTokenLen), nil},
		{"more than 8 KiB is malformed", []string{"Bearer " + strings.Repeat("a", MaxBearerTokenLen+1)}, "", errMalformedBearer},
		{"non-ASCII is malformed", []string{"Bearer abcé"}, "", errMalformedBearer},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tok, err := parseBearer(c.values)
			if tok != c.tok || !errors.Is(err, c.err) {
				t.Errorf("got %.20q, %v; want %.20q, %v", tok, err, c.tok, c.err)
			}
		})
	}
}

func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "Basic x", "", "Bearer ", "Bearer a==", "BEARER  x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tok, err := parseBearer([]string{v})
		if err != nil {
			if tok != "" || !errors.Is(err, errMalformedBearer) {
				t.Fatalf("%q: token %q with error %v", v, tok, err)
			}
			return
		}
		if tok == "" || len(tok) > MaxBearerTokenLen || !strings.HasSuffix(v, tok) ||
			!strings.EqualFold(v[:7], "bearer ") || strings.ContainsAny(tok, " \t\r\n\"") {
			t.Fatalf("%q: accepted token %q", v, tok)
		}
	})
}
