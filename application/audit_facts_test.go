package application_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// One audit type per fact, whoever acts (docs/admin.md, "Audit event
// types"): each fact done on the command line (Users and Keys as the
// system actor, the user's own SelfService) and over the admin API (Users
// and Keys as an admin) is recorded under the same type, the admin's with the actor; the
// admin API's query by type finds both. An admin update changing two
// facts records two events. Nothing is recorded under the old admin.*
// types.
func TestEachFactHasOneAuditTypeWhoeverActs(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must2 := func(_ any, err error) { t.Helper(); must(err) }
	on, off := true, false
	root := f.add(t, "root", true) // the command line: user.added, user.admin_granted

	// The command line.
	f.add(t, "viacli", false)
	must2(patchByName(ctx, f.ua, "viacli", application.UserPatch{Active: new(false)}))
	must2(patchByName(ctx, f.ua, "viacli", application.UserPatch{Active: new(true)}))
	must2(resetByName(ctx, f.ua, "viacli", "another password 27 bytes"))
	must2(patchByName(ctx, f.ua, "viacli", application.UserPatch{Admin: new(true)}))
	must2(patchByName(ctx, f.ua, "viacli", application.UserPatch{Admin: new(false)}))
	own := f.loginAs(t, f.add(t, "owner", false))
	must(f.self.RevokeSession(ctx, domain.AsPrincipal(own), own.FamilyID))

	// The admin API.
	api, err := f.admin.Add(ctx, domain.AsPrincipal(root), application.AddUserInput{Username: "viaapi", Password: adminTestPassword, Active: true})
	must(err)
	must2(f.admin.Patch(ctx, domain.AsPrincipal(root), api.ID, application.UserPatch{Active: &off}))
	must2(f.admin.Patch(ctx, domain.AsPrincipal(root), api.ID, application.UserPatch{Active: &on}))
	must2(f.admin.Patch(ctx, domain.AsPrincipal(root), api.ID, application.UserPatch{Admin: &on}))
	must2(f.admin.Patch(ctx, domain.AsPrincipal(root), api.ID, application.UserPatch{Admin: &off}))
	sess := f.loginAs(t, domain.Principal{ID: api.ID, Username: "viaapi"})
	must(f.admin.RevokeSession(ctx, domain.AsPrincipal(root), sess.FamilyID))
	must(f.admin.RevokeSessions(ctx, domain.AsPrincipal(root), api.ID))
	must(f.admin.ResetPassword(ctx, domain.AsPrincipal(root), api.ID, "another password 27 bytes"))
	must(f.admin.Delete(ctx, domain.AsPrincipal(root), api.ID))
	both, err := f.admin.Add(ctx, domain.AsPrincipal(root), application.AddUserInput{Username: "both", Password: adminTestPassword, Active: true})
	must(err)
	must2(f.admin.Patch(ctx, domain.AsPrincipal(root), both.ID, application.UserPatch{Active: &off, Admin: &on}))

	// The keys, both ways.
	keyStore := memstore.NewKeyStore(f.log)
	tok, err := josejwt.New(ctx, josejwt.Options{Keys: keyStore, Clock: f.clock.(ports.Clock)})
	must(err)
	keys, err := application.NewKeys(tok, f.clock.(ports.Clock), nil, f.auditor)
	must(err)
	k1, err := keys.Rotate(ctx, domain.System(), application.RotateKeyInput{})
	must(err)
	k2, err := keys.Rotate(ctx, domain.AsPrincipal(root), application.RotateKeyInput{})
	must(err)
	must(keys.Revoke(ctx, domain.System(), k1.ID))
	must(keys.Revoke(ctx, domain.AsPrincipal(root), k2.ID))

	for _, c := range []struct {
		typ domain.AuditType
		// the events by the command line (or the user) and by root
		cli, admin int
	}{
		{domain.AuditUserAdded, 3, 2},        // root, viacli, owner; viaapi, both
		{domain.AuditUserAdminGranted, 2, 2}, // root (an admin from the start), viacli; viaapi, both
		{domain.AuditUserDisabled, 1, 2},
		{domain.AuditUserEnabled, 1, 1},
		{domain.AuditUserPasswordChanged, 1, 1},
		{domain.AuditUserAdminRevoked, 1, 1},
		{domain.AuditSessionRevoked, 1, 2},
		{domain.AuditUserDeleted, 0, 1}, // the command line deletes no user
		{domain.AuditKeyRotated, 1, 1},
		{domain.AuditKeyRevoked, 1, 1},
	} {
		page, _, err := f.audit.Page(ctx, application.AuditPageInput{Filter: ports.AuditFilter{Type: c.typ}.Where(), Limit: 100})
		must(err)
		var cli, admin int
		for _, e := range page {
			switch e.ActorID {
			case "":
				cli++
			case root.ID:
				if e.ActorUsername != "root" {
					t.Errorf("%s: actor %q, want root", c.typ, e.ActorUsername)
				}
				admin++
			default:
				t.Errorf("%s: actor %q", c.typ, e.ActorID)
			}
		}
		if cli != c.cli || admin != c.admin {
			t.Errorf("%s: %d events without an actor and %d by root, want %d and %d", c.typ, cli, admin, c.cli, c.admin)
		}
	}
	all, err := f.log.Events(ctx, ports.AuditFilter{})
	must(err)
	for _, e := range all {
		if strings.HasPrefix(string(e.Type), "admin.") {
			t.Errorf("an event of the old type %s: %+v", e.Type, e)
		}
	}
	for _, typ := range []domain.AuditType{domain.AuditUserDisabled, domain.AuditUserAdminGranted} {
		if got, _ := f.log.Events(ctx, ports.AuditFilter{Type: typ, Username: "both"}); len(got) != 1 {
			t.Errorf("PATCH {active: false, admin: true}: %d %s events, want 1", len(got), typ)
		}
	}
}
