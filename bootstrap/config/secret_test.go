package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/bootstrap/config"
	"go.yaml.in/yaml/v3"
)

func TestSecretsNeverAppearWhenTheConfigIsPrinted(t *testing.T) {
	t.Parallel()
	const (
		secret = "hs256-SECRET-0123456789abcdef0123456789"
		dbPass = "db-PASSWORD-42"
		qPass  = "query-PASSWORD-43"
	)
	c := mustLoad(t, input{env: map[string]string{
		"CACHEGATE_HS256_SECRET": secret,
		"CACHEGATE_DATABASE":     "postgres://app:" + dbPass + "@db:5432/cache?sslmode=disable&password=" + qPass,
	}})
	if c.Auth.HS256Secret.Reveal() != secret {
		t.Fatal("the secret did not load")
	}
	var textLog, jsonLog bytes.Buffer
	slog.New(slog.NewTextHandler(&textLog, nil)).Info("start", "config", c)
	slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("start", "config", c, "auth", c.Auth, "secret", c.Auth.HS256Secret)
	asJSON, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	authYAML, err := yaml.Marshal(c.Auth)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"Sprint":         fmt.Sprint(c),
		"%v":             fmt.Sprintf("%v", c),
		"%+v":            fmt.Sprintf("%+v", c),
		"%#v":            fmt.Sprintf("%#v", c),
		"%s":             fmt.Sprintf("%s", c),
		"%x":             fmt.Sprintf("%x", c),
		"%d":             fmt.Sprintf("%d", c),
		"%q":             fmt.Sprintf("%q", c),
		"%+v of pointer": fmt.Sprintf("%+v", &c),
		"%#v of auth":    fmt.Sprintf("%#v", c.Auth),
		"%x of secret":   fmt.Sprintf("%x", c.Auth.HS256Secret),
		"%s of secret":   fmt.Sprintf("%s", c.Auth.HS256Secret),
		"slog text":      textLog.String(),
		"slog JSON":      jsonLog.String(),
		"JSON":           string(asJSON),
		"YAML of auth":   string(authYAML),
	}
	for name, out := range outputs {
		for _, s := range []string{secret, dbPass, qPass} {
			if strings.Contains(out, s) {
				t.Errorf("%s shows a secret: %s", name, out)
			}
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("%s does not say REDACTED: %s", name, out)
		}
	}
	for _, want := range []string{"config.addr=127.0.0.1:8080", "config.auth.hs256Secret=REDACTED", `config.cache.assignments="user=userCache/owner"`} {
		if !strings.Contains(textLog.String(), want) {
			t.Errorf("slog text lacks %q: %s", want, textLog.String())
		}
	}
}

func TestSecretAccessors(t *testing.T) {
	t.Parallel()
	s := config.NewSecret("abc")
	if !s.IsSet() || s.Len() != 3 || s.Reveal() != "abc" || string(s.Bytes()) != "abc" {
		t.Fatalf("accessors disagree: set %v len %d", s.IsSet(), s.Len())
	}
	b := s.Bytes()
	b[0] = 'x'
	if s.Reveal() != "abc" {
		t.Fatal("Bytes shares memory with the secret")
	}
	if (config.Secret{}).IsSet() {
		t.Fatal("the zero Secret is set")
	}
	if (config.Secret{}).Bytes() != nil {
		t.Fatal("the zero Secret's Bytes are not nil: an unset HS256 secret would switch signing to HS256")
	}
	if got := s.String() + s.GoString() + s.LogValue().String(); got != "REDACTEDREDACTEDREDACTED" {
		t.Fatalf("printed forms = %q", got)
	}
}

func TestRedactDatabaseURL(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"SQLite is unchanged", "sqlite:cachegate.db", "sqlite:cachegate.db"},
		{"a URL without password is unchanged", "postgres://app@db:5432/x?sslmode=disable", "postgres://app@db:5432/x?sslmode=disable"},
		{"the user password is redacted", "postgres://app:pw@db/x", "postgres://app:REDACTED@db/x"},
		{"query passwords are redacted", "postgresql://db/x?password=pw&sslpassword=kp&sslmode=require",
			"postgresql://db/x?password=REDACTED&sslmode=require&sslpassword=REDACTED"},
		{"an unparsable URL keeps only its scheme", "postgres://app:p w@[db/x", "postgres://REDACTED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := config.RedactDatabaseURL(tc.in); got != tc.want {
				t.Fatalf("RedactDatabaseURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestHS256SecretSources(t *testing.T) {
	t.Parallel()
	const fromEnv, fromFile = "env-secret-0123456789abcdef0123456789", "file-secret-0123456789abcdef012345678"
	path := writeFile(t, "hs256", fromFile+"\r\n")
	cases := []struct {
		name     string
		in       input
		want     string
		wantFile string
	}{
		{"a secret file flag beats a secret in the environment",
			input{args: []string{"--hs256-secret-file", path}, env: map[string]string{"CACHEGATE_HS256_SECRET": fromEnv}},
			fromFile, path},
		{"a secret in the environment beats a secret file in YAML",
			input{env: map[string]string{"CACHEGATE_HS256_SECRET": fromEnv}, yaml: "auth:\n  hs256SecretFile: " + path + "\n"},
			fromEnv, ""},
		{"a secret in YAML is read",
			input{yaml: "auth:\n  hs256Secret: " + fromEnv + "\n"},
			fromEnv, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, tc.in)
			if c.Auth.HS256Secret.Reveal() != tc.want || c.Auth.HS256SecretFile != tc.wantFile {
				t.Fatalf("got the secret of length %d from file %q; want length %d from %q",
					c.Auth.HS256Secret.Len(), c.Auth.HS256SecretFile, len(tc.want), tc.wantFile)
			}
		})
	}
}
