package config_test

import (
	"slices"
	"strings"
	"testing"
)

func TestCORSSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		in          input
		origins     []string
		credentials bool
	}{
		{"the default is no CORS at all", input{}, nil, false},
		{"a flag lists origins, normalised", input{args: []string{"--cors-origins", " https://App.Example/ ,http://localhost:5173,https://app.example"}},
			[]string{"https://app.example", "http://localhost:5173"}, false},
		{"the environment allows any origin", input{env: map[string]string{"CACHEGATE_CORS_ORIGINS": "*"}}, []string{"*"}, false},
		{"YAML gives a list and credentials", input{yaml: "cors:\n  origins:\n    - https://a.example\n    - https://b.example:8443\n  credentials: true\n"},
			[]string{"https://a.example", "https://b.example:8443"}, true},
		{"the flag wins over YAML", input{args: []string{"--cors-origins", "https://flag.example", "--cors-credentials=false"},
			yaml: "cors: {origins: [https://yaml.example], credentials: true}\n"}, []string{"https://flag.example"}, false},
		{"the environment turns credentials on", input{env: map[string]string{"CACHEGATE_CORS_ORIGINS": "https://a.example", "CACHEGATE_CORS_CREDENTIALS": "true"}},
			[]string{"https://a.example"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, tc.in)
			if !slices.Equal(c.CORS.Origins, tc.origins) || c.CORS.Credentials != tc.credentials {
				t.Errorf("CORS = %+v, want origins %q and credentials %v", c.CORS, tc.origins, tc.credentials)
			}
			if c.CORS.Enabled() != (len(tc.origins) > 0) {
				t.Errorf("Enabled() = %v with origins %q", c.CORS.Enabled(), c.CORS.Origins)
			}
		})
	}
}

func TestCORSSettingsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   input
		want string
	}{
		{"* with credentials", input{args: []string{"--cors-origins", "*", "--cors-credentials"}},
			"cors-credentials: cannot be used with the origin *"},
		{"* with credentials from YAML", input{yaml: "cors: {origins: ['*'], credentials: true}\n"},
			"cors.credentials: cannot be used with the origin *"},
		{"* among other origins", input{args: []string{"--cors-origins", "*,https://a.example"}},
			"cors-origins: * allows every origin and must be given alone"},
		{"an origin with a path", input{args: []string{"--cors-origins", "https://a.example/app"}},
			`cors-origins: "https://a.example/app": must be origins`},
		{"an origin without a scheme", input{env: map[string]string{"CACHEGATE_CORS_ORIGINS": "app.example"}},
			`CACHEGATE_CORS_ORIGINS: "app.example": must be origins`},
		{"an origin of another scheme", input{args: []string{"--cors-origins", "ftp://a.example"}},
			`cors-origins: "ftp://a.example": must be origins`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tc.in)
			if err == nil || !slices.ContainsFunc(lines(err), func(l string) bool { return strings.HasPrefix(l, tc.want) }) {
				t.Errorf("load = %v, want a line starting %q", err, tc.want)
			}
		})
	}
}
