package ginhttp_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/admin"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// TestADemotedAdminsAuditStreamEnds: an admin's live audit stream ends
// with `event: end` ("not an admin") once the admin flag is removed
// (docs/admin.md), while the connection is still open.
func TestADemotedAdminsAuditStreamEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock, ids := system.Clock{}, system.UUIDv7{}
	refresh := memstore.NewRefreshStore(nil)
	users := memstore.NewUserRepository(nil, refresh)
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	check, err := application.NewAdminCheck(users, clock)
	if err != nil {
		t.Fatal(err)
	}
	ua, err := application.NewUsers(application.UsersDeps{Users: users, Hasher: hasher, Clock: clock, IDs: ids, Check: check, Refresh: refresh})
	if err != nil {
		t.Fatal(err)
	}
	var adm2 string
	for _, name := range []string{"root", "adm2"} {
		u, err := ua.Add(ctx, domain.System(), application.AddUserInput{Username: name, Password: "a password of 27 bytes long", Active: true, Admin: true})
		if err != nil {
			t.Fatal(err)
		}
		adm2 = u.ID
	}
	audit := application.NewAuditTrail(application.AuditTrailDeps{Store: memstore.NewAuditLog(), Clock: clock, IDs: ids})
	srv, err := ginhttp.New(ginhttp.Options{Authenticator: fakeAuth{}, EnableGuards: true,
		Admin: &admin.Options{Check: check, Audit: audit, AuditPoll: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	reqCtx, cancel := context.WithTimeout(ctx, capBound)
	defer cancel()
	req, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, ts.URL+"/admin/audit/events", nil)
	req.Header.Set("Authorization", "Bearer good-"+adm2)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/audit/events as an admin: %d", res.StatusCode)
	}
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() && lines.Text() != ": stream open" {
	}
	demote := false
	if _, err := ua.Patch(ctx, domain.System(), adm2, application.UserPatch{Admin: &demote}); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		if lines.Text() != "event: end" {
			continue
		}
		if !lines.Scan() || !strings.Contains(lines.Text(), `"not an admin"`) {
			t.Fatalf("the stream ended with %q, want the reason \"not an admin\"", lines.Text())
		}
		return
	}
	t.Fatalf("the demoted admin's stream did not end within %s (%v)", capBound, lines.Err())
}
