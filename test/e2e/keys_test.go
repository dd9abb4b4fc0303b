package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/contract"
)

// storedPrivate reads the private column of the key kid with plain SQL.
func (b *authBinary) storedPrivate(t *testing.T, kid string) []byte {
	t.Helper()
	db, err := sql.Open(b.driver, b.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var private []byte
	if err := db.QueryRowContext(ctx, `SELECT "private" FROM signing_keys WHERE id = $1`, kid).Scan(&private); err != nil {
		t.Fatalf("read the signing key: %v", err)
	}
	return private
}

// Issue 11: with --key-encryption-secret-file the stored private key is
// encrypted (a key stored before is encrypted on the next start, keeping
// its kid), plain SQL finds no seed, tokens keep working, and a start
// without the secret or with another one stops with a clear error.
func TestSigningKeysAtRest(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100}
			b := newAuthBinary(t, db, cfg)
			const password = "at-rest-password-1"
			b.addUser(t, "ada", password, true)
			before := loginAt(t, b.client, b.srv.URL, "ada", password)
			plain := b.signingKey(t)
			if len(plain.Private) != 32 {
				t.Fatalf("without a secret the stored private half is %d bytes, want a 32-byte seed", len(plain.Private))
			}
			if code := b.srv.stop(t); code != 0 {
				t.Fatalf("stop: status %d", code)
			}

			secretFile := filepath.Join(b.dir, "key-secret")
			if err := os.WriteFile(secretFile, []byte("\n  "+strings.Repeat("s3cr3t-", 6)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append(authArgs(b.dbURL, cfg), "--key-encryption-secret-file", secretFile)
			b.srv = startServer(t, serverConfig{Dir: b.dir, Args: args})
			sealed := b.storedPrivate(t, plain.ID)
			if len(sealed) == 32 || !bytes.HasPrefix(sealed, []byte("cgk1")) || bytes.Contains(sealed, plain.Private) {
				t.Fatalf("with the secret the stored private half is %d bytes and not sealed", len(sealed))
			}
			if st := probeAt(t, b.client, b.srv.URL, before.Access); st != http.StatusOK {
				t.Fatalf("an access token from before the encryption answered %d", st)
			}
			after := refreshAt(t, b.client, b.srv.URL, before.Refresh, http.StatusCreated)
			if st := probeAt(t, b.client, b.srv.URL, after.Access); st != http.StatusOK {
				t.Fatalf("an access token signed with the encrypted key answered %d", st)
			}
			if code := b.srv.stop(t); code != 0 {
				t.Fatalf("stop: status %d", code)
			}

			wrongFile := filepath.Join(b.dir, "wrong-secret")
			if err := os.WriteFile(wrongFile, []byte(strings.Repeat("w", 40)), 0o600); err != nil {
				t.Fatal(err)
			}
			for name, extra := range map[string][]string{
				"without the secret":  nil,
				"with another secret": {"--key-encryption-secret-file", wrongFile},
			} {
				serve := append([]string{"serve", "--addr", "127.0.0.1:0"}, authArgs(b.dbURL, cfg)...)
				r := runCLI(t, b.dir, "", nil, append(serve, extra...)...)
				if r.Code == 0 || !strings.Contains(r.Stderr, plain.ID) ||
					!strings.Contains(r.Stderr, "key encryption secret") {
					t.Errorf("serve %s: status %d, stderr %q; want a failure naming the key and the secret", name, r.Code, r.Stderr)
				}
			}
		})
	}
}
