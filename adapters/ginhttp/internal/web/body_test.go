package web

import "testing"

func TestIsJSONMediaType(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"application/json": true, "Application/JSON": true, "application/json; charset=utf-8": true,
		`application/json;charset="UTF-8"`: true, "application/json; foo=bar": true,
		"application/json; charset=latin1": false, "text/json": false, "application/jsonp": false, "": false,
		"application/problem+json": false,
	} {
		if got := isJSONMediaType(ct); got != want {
			t.Errorf("%q: %v, want %v", ct, got, want)
		}
	}
}
