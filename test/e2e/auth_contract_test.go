package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/contract"
	"github.com/cachegate/cachegate/test/pgtest"
)

// authDB is one database the authentication tests run the binary on.
type authDB struct {
	name string
	// open returns the --database URL and the driver name and DSN this
	// test process reads the same database with.
	open func(t *testing.T, dir string) (url, driver, dsn string)
}

// authDatabases are a SQLite file and a fresh PostgreSQL database.
var authDatabases = []authDB{
	{"on a SQLite file", func(_ *testing.T, dir string) (string, string, string) {
		path := filepath.Join(dir, "auth.db")
		return "sqlite:" + path, "sqlite", "file:" + path + "?_pragma=busy_timeout(10000)"
	}},
	{"on PostgreSQL", func(t *testing.T, _ string) (string, string, string) {
		u := pgtest.New(t)
		return u, "pgx", u
	}},
}

// The HTTP contract of authentication against the real binary. Users are
// created and disabled with the CLI on the same database while the server
// runs, as an administrator would.
func TestAuthHTTPContractOnTheBinary(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			contract.AuthHTTP(t, func(t *testing.T, c contract.AuthHTTPConfig) contract.AuthHTTPTarget {
				return newAuthBinary(t, db, c).target()
			})
		})
	}
}

// authBinary is one `cachegate serve` with its database, as the
// authentication tests drive it.
type authBinary struct {
	srv         *server
	dir         string
	dbURL       string
	driver, dsn string
	client      *http.Client
}

// newAuthBinary starts the binary configured as c on a new database.
func newAuthBinary(t *testing.T, db authDB, c contract.AuthHTTPConfig) *authBinary {
	t.Helper()
	b := &authBinary{dir: t.TempDir(), client: newClient()}
	b.dbURL, b.driver, b.dsn = db.open(t, b.dir)
	b.srv = startServer(t, serverConfig{Dir: b.dir, Args: authArgs(b.dbURL, c)})
	return b
}

// authArgs are serve's flags for c.
func authArgs(dbURL string, c contract.AuthHTTPConfig) []string {
	args := []string{"--database", dbURL,
		"--throttle-username-limit", fmt.Sprint(c.UsernameLimit),
		"--throttle-address-limit", fmt.Sprint(c.AddressLimit)}
	if c.ThrottleWindow > 0 {
		args = append(args, "--throttle-window", seconds(c.ThrottleWindow))
	}
	if c.AccessTTL > 0 {
		args = append(args, "--access-token-ttl", seconds(c.AccessTTL))
	}
	switch {
	case c.ReuseGrace < 0:
		args = append(args, "--refresh-reuse-grace", "0")
	case c.ReuseGrace > 0:
		args = append(args, "--refresh-reuse-grace", seconds(c.ReuseGrace))
	}
	if c.UsernameField != "" {
		args = append(args, "--username-field", c.UsernameField)
	}
	if c.PasswordField != "" {
		args = append(args, "--password-field", c.PasswordField)
	}
	return args
}

// seconds writes d in whole seconds, a form every duration setting reads.
func seconds(d time.Duration) string { return fmt.Sprintf("%ds", int64(d/time.Second)) }

// cli runs an administrative command on b's database.
func (b *authBinary) cli(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return runCLI(t, b.dir, stdin, nil, append(args, "--database", b.dbURL)...)
}

// addUser runs `cachegate users add` and returns the printed id.
func (b *authBinary) addUser(t *testing.T, username, password string, active bool) string {
	t.Helper()
	args := []string{"users", "add", "--username", username, "--password-stdin"}
	if !active {
		args = append(args, "--inactive")
	}
	r := b.cli(t, password+"\n", args...)
	if r.Code != 0 || !uuidLine.MatchString(r.Stdout) {
		t.Fatalf("users add: status %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout+r.Stderr, password) {
		t.Error("users add printed the password")
	}
	return strings.TrimSpace(r.Stdout)
}

// disableUser runs `cachegate users disable`.
func (b *authBinary) disableUser(t *testing.T, username string) {
	t.Helper()
	if r := b.cli(t, "", "users", "disable", username); r.Code != 0 {
		t.Fatalf("users disable: status %d, stderr %q", r.Code, r.Stderr)
	}
}

func (b *authBinary) setPassword(t *testing.T, username, password string) {
	t.Helper()
	if r := b.cli(t, password+"\n", "users", "set-password", username, "--password-stdin"); r.Code != 0 {
		t.Fatalf("users set-password: status %d, stderr %q", r.Code, r.Stderr)
	}
}

var rotatedKid = regexp.MustCompile(`new signing key (\S+) is current`)

// rotate runs `cachegate keys rotate --now` (the new key signs at once)
// and returns the new kid.
func (b *authBinary) rotate(t *testing.T) string {
	t.Helper()
	r := b.cli(t, "", "keys", "rotate", "--now")
	m := rotatedKid.FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil {
		t.Fatalf("keys rotate: status %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	return m[1]
}

// rotateAndReload rotates the key and makes the server notice at once: it
// re-reads its keys at most every minute, or when a token names a kid it
// does not know, as a token from a replica that already signs with the
// new key does. This sends it such a token until the JWKS lists the key.
func (b *authBinary) rotateAndReload(t *testing.T) {
	t.Helper()
	kid := b.rotate(t)
	key := b.signingKey(t)
	if key.ID != kid {
		t.Fatalf("the current key in the database is %s, keys rotate printed %s", key.ID, kid)
	}
	now := time.Now().Unix()
	tok, err := contract.SignJWT(key, "at+jwt", map[string]any{"iss": "cachegate", "aud": "cachegate",
		"sub": newUUID(), "jti": newUUID(), "iat": now, "exp": now + 600})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		mustSend(t, b.client, http.MethodGet, b.srv.URL+"/cache/user", nil, "Authorization", "Bearer "+tok)
		r := mustSend(t, b.client, http.MethodGet, b.srv.URL+"/.well-known/jwks.json", nil)
		if strings.Contains(string(r.Body), `"`+kid+`"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not pick up key %s within 15 s", kid)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// signingKey reads the current signing key from the database.
func (b *authBinary) signingKey(t *testing.T) domain.SigningKey {
	t.Helper()
	db, err := sql.Open(b.driver, b.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k := domain.SigningKey{}
	err = db.QueryRowContext(ctx, `SELECT id, algorithm, "private" FROM signing_keys
		WHERE retired_at IS NULL AND revoked_at IS NULL ORDER BY date_created DESC, id DESC`).Scan(&k.ID, &k.Algorithm, &k.Private)
	if err != nil {
		t.Fatalf("read the current signing key: %v", err)
	}
	return k
}

// target is b as the contract suite sees it.
func (b *authBinary) target() contract.AuthHTTPTarget {
	return contract.AuthHTTPTarget{
		BaseURL:         b.srv.URL,
		AddUser:         b.addUser,
		DisableUser:     b.disableUser,
		SetPassword:     b.setPassword,
		SubjectCacheTTL: time.Second,
		Rotate:          b.rotateAndReload,
		SigningKey:      b.signingKey,
		ExtraGuarded:    []string{"/metrics"},
		Client:          b.client,
	}
}
