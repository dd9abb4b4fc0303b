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
// encrypted, plain SQL finds no seed, tokens keep working, and a start
// without the secret or with another one stops with a clear error.
// Issue 31: a key stored in clear before is not sealed in place: the
// first start with the secret makes a new sealed key sign and retires the
// old one with its private half erased; its tokens keep working.
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
			if erased := b.storedPrivate(t, plain.ID); len(erased) != 0 {
				t.Fatalf("with the secret the key stored in clear keeps %d bytes of private half, want none", len(erased))
			}
			current := b.signingKey(t)
			if current.ID == plain.ID || !bytes.HasPrefix(current.Private, []byte("cgk1")) || bytes.Contains(current.Private, plain.Private) {
				t.Fatalf("with the secret key %s signs, its private half %d bytes; want a new sealed key", current.ID, len(current.Private))
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
				if r.Code == 0 || !strings.Contains(r.Stderr, current.ID) ||
					!strings.Contains(r.Stderr, "key encryption secret") {
					t.Errorf("serve %s: status %d, stderr %q; want a failure naming the key and the secret", name, r.Code, r.Stderr)
				}
			}
		})
	}
}

// keyRevocationBound is how soon every server must refuse the tokens of a
// revoked key: as soon as it lists a published key (publishReachBound).
const keyRevocationBound = publishReachBound

// Issue 11: `cachegate keys list` shows each key's id, state and dates;
// `cachegate keys revoke KID` makes both replicas refuse the key's tokens,
// genuine or forged with its leaked private key, within a second.
func TestKeysListAndRevoke(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100}
			a := newAuthBinary(t, db, cfg)
			b := startServer(t, serverConfig{Dir: a.dir, Args: authArgs(a.dbURL, cfg)})
			replicas := []string{a.srv.URL, b.URL}
			const password = "revoke-password-1"
			userID := a.addUser(t, "rex", password, true)
			p := loginAt(t, a.client, b.URL, "rex", password)
			leaked := a.signingKey(t) // as read from a stolen database file
			now := time.Now().Unix()
			forged, err := contract.SignJWT(leaked, "at+jwt", map[string]any{"iss": "cachegate", "aud": "cachegate",
				"sub": userID, "jti": newUUID(), "sid": newUUID(), "client_id": "cachegate", "iat": now, "exp": now + 600})
			if err != nil {
				t.Fatal(err)
			}
			wantAcceptedEverywhere(t, a.client, replicas, forged)
			wantKeys(t, a, leaked.ID+" signing")

			next := a.rotate(t)
			wantKeys(t, a, next+" signing", leaked.ID+" retired")
			if r := a.cli(t, "", "keys", "revoke", "no-such-kid"); r.Code != 1 || !strings.Contains(r.Stderr, "no signing key") {
				t.Errorf("keys revoke of an unknown kid: status %d, stderr %q; want 1 and a clear error", r.Code, r.Stderr)
			}
			if r := a.cli(t, "", "keys", "revoke", "--", leaked.ID); r.Code != 0 {
				t.Fatalf("keys revoke: status %d, stderr %q", r.Code, r.Stderr)
			}
			revoked := time.Now()
			wantKeys(t, a, next+" signing", leaked.ID+" revoked")
			for _, tok := range []string{forged, p.Access} {
				for _, base := range replicas {
					for probeAt(t, a.client, base, tok) != http.StatusUnauthorized {
						if time.Since(revoked) > keyRevocationBound {
							t.Fatalf("%s accepts a token of a key revoked %v ago", base, keyRevocationBound)
						}
						time.Sleep(500 * time.Millisecond)
					}
				}
			}
			refreshAt(t, a.client, a.srv.URL, p.Refresh, http.StatusUnauthorized)
			// Revoking the current key makes a new one current first. (A
			// kid is base64url and may start with "-": "--" ends the flags.)
			if r := a.cli(t, "", "keys", "revoke", "--", next); r.Code != 0 {
				t.Fatalf("keys revoke of the current key: status %d, stderr %q", r.Code, r.Stderr)
			}
			lines := keysList(t, a)
			if len(lines) != 3 || !strings.HasSuffix(lines[0], " signing") || lines[1] != next+" revoked" {
				t.Errorf("keys list after revoking the current key = %q", lines)
			}
			loginAt(t, a.client, a.srv.URL, "rex", password)
		})
	}
}

// keysList runs `cachegate keys list` and returns "KID STATE" per key,
// checking the dates columns on the way.
func keysList(t *testing.T, b *authBinary) []string {
	t.Helper()
	r := b.cli(t, "", "keys", "list")
	if r.Code != 0 {
		t.Fatalf("keys list: status %d, stderr %q", r.Code, r.Stderr)
	}
	rows := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(rows) == 0 || strings.Join(strings.Fields(rows[0]), " ") != "KID STATE CREATED SIGNS-FROM RETIRED REVOKED" {
		t.Fatalf("keys list printed %q", r.Stdout)
	}
	var out []string
	for _, row := range rows[1:] {
		f := strings.Fields(row)
		if len(f) != 6 {
			t.Fatalf("keys list row %q has %d columns, want 6", row, len(f))
		}
		for _, i := range []int{2, 3} {
			if _, err := time.Parse(time.RFC3339, f[i]); err != nil {
				t.Errorf("keys list row %q: column %d %q is not RFC 3339", row, i+1, f[i])
			}
		}
		out = append(out, f[0]+" "+f[1])
	}
	return out
}

// wantKeys fails t unless `cachegate keys list` shows exactly want.
func wantKeys(t *testing.T, b *authBinary, want ...string) {
	t.Helper()
	if got := keysList(t, b); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keys list = %q, want %q", got, want)
	}
}
