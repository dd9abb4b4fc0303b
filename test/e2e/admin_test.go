package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/contract"
)

// adminConfig is serve's configuration for the admin tests: a username
// limit the self-service throttle test reaches, an address limit nobody
// does.
var adminConfig = contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100000, ThrottleWindow: 15 * time.Minute}

// addAdminUser runs `cachegate users add [--admin]` and returns the id.
func (b *authBinary) addAdminUser(t *testing.T, username, password string, admin bool) string {
	t.Helper()
	args := []string{"users", "add", "--username", username, "--password-stdin"}
	if admin {
		args = append(args, "--admin")
	}
	r := b.cli(t, password+"\n", args...)
	if r.Code != 0 || !uuidLine.MatchString(r.Stdout) {
		t.Fatalf("users add: status %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	return strings.TrimSpace(r.Stdout)
}

// The admin API's HTTP contract (docs/admin.md) on the binary, on a
// SQLite file and on PostgreSQL; users are made with the CLI.
func TestAdminHTTPContractOnTheBinary(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			contract.AdminHTTP(t, func(t *testing.T) contract.AdminHTTPTarget {
				b := newAuthBinary(t, db, adminConfig)
				return contract.AdminHTTPTarget{BaseURL: b.srv.URL, AddUser: b.addAdminUser, Client: b.client}
			})
		})
	}
}

// `cachegate users admin revoke` on the shared database: another replica,
// which admitted the admin a moment before, refuses it within a second
// (its admin check reads the store, cached at most 1 s; README.md,
// "Administration over HTTP"). The bound checked is 1 s plus the time of
// one request on this loaded machine.
func TestARevokedAdminLosesItsRightsWithinASecondOnEveryReplica(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			a := newAuthBinary(t, db, adminConfig)
			b := startServer(t, serverConfig{Dir: a.dir, Args: authArgs(a.dbURL, adminConfig)})
			const password = "replica admin password"
			a.addAdminUser(t, "ada", password, true)
			a.addAdminUser(t, "keeper", password, true) // the last active admin cannot be revoked
			p := loginAt(t, a.client, a.srv.URL, "ada", password)
			for _, s := range []*server{a.srv, b} {
				if r := mustSend(t, a.client, http.MethodGet, s.URL+"/admin/users", nil, "Authorization", "Bearer "+p.Access); r.Status != http.StatusOK {
					t.Fatalf("the admin at %s: %d", s.URL, r.Status)
				}
			}
			if r := a.cli(t, "", "users", "admin", "revoke", "ada"); r.Code != 0 {
				t.Fatalf("users admin revoke: status %d, stderr %q", r.Code, r.Stderr)
			}
			revoked := time.Now()
			for _, s := range []*server{b, a.srv} {
				for {
					r := mustSend(t, a.client, http.MethodGet, s.URL+"/admin/users", nil, "Authorization", "Bearer "+p.Access)
					if r.Status == http.StatusForbidden {
						break
					}
					if r.Status != http.StatusOK {
						t.Fatalf("at %s: %d", s.URL, r.Status)
					}
					if time.Since(revoked) > 1500*time.Millisecond {
						t.Fatalf("%s still admits the revoked admin %v after the revocation", s.URL, time.Since(revoked))
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			t.Logf("both replicas refused the revoked admin within %v", time.Since(revoked).Round(time.Millisecond))
			// The user keeps their ordinary rights.
			if r := mustSend(t, a.client, http.MethodGet, b.URL+"/cache/user", nil, "Authorization", "Bearer "+p.Access); r.Status != http.StatusOK {
				t.Errorf("the former admin's own list: %d", r.Status)
			}
		})
	}
}
