package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Commands that do not use the signing keys (users …, audit, migrate)
// work on a database whose keys are sealed, without the key-encryption
// secret; the key commands still need it (README.md, "Commands").
func TestCommandsWithoutSigningKeysNeedNoKeyEncryptionSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "sealed.db")
	secret := filepath.Join(dir, "key-secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("k3y-s3cr3t-", 4)), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, dir, "", nil, "keys", "rotate", "--database", db, "--key-encryption-secret-file", secret); r.Code != 0 {
		t.Fatalf("keys rotate with the secret: status %d, stderr %q", r.Code, r.Stderr)
	}
	if r := runCLI(t, dir, "", nil, "keys", "list", "--database", db); r.Code == 0 ||
		!strings.Contains(r.Stderr, "key encryption secret") {
		t.Fatalf("keys list without the secret: status %d, stderr %q; want a failure: the keys are sealed", r.Code, r.Stderr)
	}
	for _, c := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"migrate"}, ""},
		{[]string{"users", "add", "--username", "ada", "--password-stdin"}, "a-long-password-1\n"},
		{[]string{"users", "list"}, ""},
		{[]string{"users", "set-password", "ada", "--password-stdin"}, "a-long-password-2\n"},
		{[]string{"users", "disable", "ada"}, ""},
		{[]string{"users", "enable", "ada"}, ""},
		{[]string{"users", "add", "--username", "root", "--password-stdin", "--admin"}, "a-long-password-3\n"},
		{[]string{"users", "admin", "grant", "ada"}, ""},
		{[]string{"users", "admin", "revoke", "ada"}, ""},
		{[]string{"audit"}, ""},
	} {
		args := append(append([]string(nil), c.args...), "--database", db)
		if r := runCLI(t, dir, c.stdin, nil, args...); r.Code != 0 {
			t.Errorf("cachegate %s without the secret: status %d, stderr %q; want 0", strings.Join(c.args, " "), r.Code, r.Stderr)
		}
	}
}

// Each command's --help lists the flags of the settings it reads only.
func TestEachCommandsHelpListsOnlyTheFlagsItReads(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args           []string
		listed, absent []string
	}{
		{[]string{"serve"}, []string{"--addr", "--cors-origins", "--database", "--bcrypt-cost", "--key-encryption-secret-file", "--metrics-token-file"}, nil},
		{[]string{"users", "add"}, []string{"--database", "--bcrypt-cost", "--username"},
			[]string{"--addr", "--cors-origins", "--metrics-addr", "--key-encryption-secret-file", "--throttle-window"}},
		{[]string{"users", "list"}, []string{"--database"}, []string{"--addr", "--cors-origins", "--bcrypt-cost"}},
		{[]string{"users", "admin", "grant"}, []string{"--database"}, []string{"--addr", "--cors-origins", "--bcrypt-cost", "--key-encryption-secret-file"}},
		{[]string{"migrate"}, []string{"--database", "--database-timeout"}, []string{"--addr", "--key-encryption-secret-file"}},
		{[]string{"audit"}, []string{"--database"}, []string{"--addr", "--key-encryption-secret-file"}},
		{[]string{"keys", "rotate"}, []string{"--database", "--key-encryption-secret-file"}, []string{"--addr", "--cors-origins", "--bcrypt-cost"}},
		{[]string{"import"}, []string{"--database", "--data-bytes", "--in"}, []string{"--addr", "--body-bytes", "--key-encryption-secret-file"}},
		{[]string{"export"}, []string{"--database"}, []string{"--data-bytes", "--addr"}},
	} {
		r := runCLI(t, t.TempDir(), "", nil, append(c.args, "--help")...)
		if r.Code != 0 {
			t.Errorf("cachegate %s --help: status %d", strings.Join(c.args, " "), r.Code)
			continue
		}
		for _, f := range c.listed {
			if !strings.Contains(r.Stdout, "\n  "+f+" ") {
				t.Errorf("cachegate %s --help does not list %s", strings.Join(c.args, " "), f)
			}
		}
		for _, f := range c.absent {
			if strings.Contains(r.Stdout, "\n  "+f+" ") {
				t.Errorf("cachegate %s --help lists %s, which it does not read", strings.Join(c.args, " "), f)
			}
		}
	}
}
