package bootstrap_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/bootstrap"
)

// cliRun runs one command line through bootstrap.Main with an empty
// environment and returns its status, stdout and stderr.
func cliRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := bootstrap.Main("test", args, strings.NewReader(stdin), &stdout, &stderr, func(string) string { return "" })
	return code, stdout.String(), stderr.String()
}

// `users admin grant|revoke` are `users` commands (README.md, "Commands"):
// on a fresh database they create no signing key, on one whose keys are
// sealed they need no key-encryption secret, and their --help lists the
// storage settings only.
func TestUsersAdminCommandsLeaveTheSigningKeysAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fresh := "sqlite:" + filepath.Join(dir, "fresh.db")
	// root stays an admin when ada's role is revoked (docs/admin.md).
	for _, name := range []string{"root", "ada"} {
		if code, _, stderr := cliRun(t, "a-long-password-1\n", "users", "add", "--username", name, "--password-stdin",
			"--admin="+fmt.Sprint(name == "root"), "--bcrypt-cost", "4", "--database", fresh); code != 0 {
			t.Fatalf("users add %s: status %d, %s", name, code, stderr)
		}
	}
	for _, verb := range []string{"grant", "revoke"} {
		if code, stdout, stderr := cliRun(t, "", "users", "admin", verb, "ada", "--database", fresh); code != 0 || !strings.Contains(stdout, "ada") {
			t.Fatalf("users admin %s: status %d, %q %q", verb, code, stdout, stderr)
		}
	}
	db, err := bunstore.Open(t.Context(), fresh)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := bunstore.NewKeyStore(db).SigningKeys(t.Context())
	_ = db.Close()
	if err != nil || len(keys) != 0 {
		t.Errorf("after users add and users admin grant|revoke the database holds %d signing keys (%v), want none", len(keys), err)
	}

	sealed := "sqlite:" + filepath.Join(dir, "sealed.db")
	secret := filepath.Join(dir, "key-secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("k3y-s3cr3t-", 4)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cliRun(t, "", "keys", "rotate", "--database", sealed, "--key-encryption-secret-file", secret); code != 0 {
		t.Fatalf("keys rotate: status %d, %s", code, stderr)
	}
	for _, name := range []string{"root", "bob"} {
		if code, _, stderr := cliRun(t, "a-long-password-1\n", "users", "add", "--username", name, "--password-stdin",
			"--admin="+fmt.Sprint(name == "root"), "--bcrypt-cost", "4", "--database", sealed); code != 0 {
			t.Fatalf("users add %s: status %d, %s", name, code, stderr)
		}
	}
	for _, verb := range []string{"grant", "revoke"} {
		if code, _, stderr := cliRun(t, "", "users", "admin", verb, "bob", "--database", sealed); code != 0 {
			t.Errorf("users admin %s without the key-encryption secret: status %d, %s", verb, code, stderr)
		}
	}

	code, stdout, _ := cliRun(t, "", "users", "admin", "--help")
	if code != 0 || !strings.Contains(stdout, "users admin grant NAME") || !strings.Contains(stdout, "users admin revoke NAME") {
		t.Errorf("users admin --help: status %d:\n%s", code, stdout)
	}
	for _, verb := range []string{"grant", "revoke"} {
		code, stdout, _ := cliRun(t, "", "users", "admin", verb, "--help")
		if code != 0 || !strings.Contains(stdout, "\n  --database ") {
			t.Errorf("users admin %s --help: status %d, no --database:\n%s", verb, code, stdout)
		}
		for _, f := range []string{"--addr", "--cors-origins", "--key-encryption-secret-file", "--issuer", "--bcrypt-cost"} {
			if strings.Contains(stdout, "\n  "+f+" ") {
				t.Errorf("users admin %s --help lists %s, which it does not read", verb, f)
			}
		}
	}
}

// serve's buffered log is written out when the start fails: the lines
// logged before the failure come first, then the error.
func TestServeFlushesItsLogWhenTheStartFails(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "missing", "dir", "cachegate.db")
	code, _, stderr := cliRun(t, "", "serve", "--addr", "127.0.0.1:0", "--database", db)
	if code != 1 {
		t.Fatalf("status %d, want 1; stderr:\n%s", code, stderr)
	}
	start := strings.Index(stderr, "msg=starting")
	if start < 0 || strings.Index(stderr, "create the SQLite file") < start {
		t.Errorf("stderr does not show the start-up line before the error:\n%s", stderr)
	}
}
