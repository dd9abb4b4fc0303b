package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// countingLog is an embedder's ports.AuditLog: it counts RecordEvent
// calls per type.
type countingLog struct {
	ports.AuditLog
	calls map[domain.AuditType]int
}

func (l *countingLog) RecordEvent(ctx context.Context, e domain.AuditEvent) error {
	l.calls[e.Type]++
	return l.AuditLog.RecordEvent(ctx, e)
}

// TestAuditorWithChangesAndEmbedderLogs shows both rules of ports.AuditLog:
// with the stores' own log the events of changes are written once, by
// the stores, with the change; an embedder's log receives every event
// through RecordEvent.
func TestAuditorWithChangesAndEmbedderLogs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		withChanges bool
		wantCalls   int
	}{
		{"the stores' own log", true, 0},
		{"an embedder's log", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			log := memstore.NewAuditLog()
			o := authOpts{}
			if tc.withChanges {
				o.storesLog = log
			}
			e := newAuthEnv(t, o)
			embedder := &countingLog{AuditLog: log, calls: map[domain.AuditType]int{}}
			e.audit(t, application.NewAuditTrail(application.AuditTrailDeps{Store: embedder, Clock: e.clock, IDs: &seqIDs{},
				StoredWithChanges: tc.withChanges}))
			e.addUser(t, "alice", pw, true)
			pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.auth.Execute(ctx, pair.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.logout.Execute(ctx, domain.AsPrincipal(p)); err != nil {
				t.Fatal(err)
			}
			for _, step := range []func() (domain.User, error){
				func() (domain.User, error) {
					return patchByName(ctx, e.admin, "alice", application.UserPatch{Active: new(false)})
				},
				func() (domain.User, error) {
					return patchByName(ctx, e.admin, "alice", application.UserPatch{Active: new(true)})
				},
				func() (domain.User, error) { return resetByName(ctx, e.admin, "alice", pw+"!") },
			} {
				if _, err := step(); err != nil {
					t.Fatal(err)
				}
			}
			types := []domain.AuditType{domain.AuditUserAdded, domain.AuditLogout, domain.AuditUserDisabled,
				domain.AuditUserEnabled, domain.AuditUserPasswordChanged}
			for _, typ := range types {
				if got := embedder.calls[typ]; got != tc.wantCalls {
					t.Errorf("RecordEvent(%s) called %d times, want %d", typ, got, tc.wantCalls)
				}
				got, err := log.Events(ctx, ports.AuditFilter{Type: typ})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].ID == "" || got[0].Time.IsZero() || got[0].Username != "alice" {
					t.Errorf("%s events %+v, want one, filled in, of alice", typ, got)
				}
			}
		})
	}
}

// TestKeysRecordKeyEventsWithTheirChange: key.rotated (its family
// the new kid) and key.revoked are written once, by the key store with
// the change when it writes into the auditor's log, else through the
// embedder's RecordEvent; a revocation of an unknown key records nothing.
func TestKeysRecordKeyEventsWithTheirChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		withChanges bool
		wantCalls   int
	}{
		{"the stores' own log", true, 0},
		{"an embedder's log", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clock := newClock()
			log := memstore.NewAuditLog()
			keys := memstore.NewKeyStore(nil)
			if tc.withChanges {
				keys = memstore.NewKeyStore(log)
			}
			tok, err := josejwt.New(ctx, josejwt.Options{Keys: keys, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			embedder := &countingLog{AuditLog: log, calls: map[domain.AuditType]int{}}
			a := application.NewAuditTrail(application.AuditTrailDeps{Store: embedder, Clock: clock, IDs: &seqIDs{},
				StoredWithChanges: tc.withChanges})
			admin, err := application.NewKeys(tok, clock, nil, a)
			if err != nil {
				t.Fatal(err)
			}
			key, err := admin.Rotate(ctx, domain.System(), application.RotateKeyInput{})
			if err != nil {
				t.Fatal(err)
			}
			kid := key.ID
			if err := admin.Revoke(ctx, domain.System(), "no-such-kid"); !errors.Is(err, domain.ErrSigningKeyNotFound) {
				t.Fatalf("Revoke(unknown) = %v, want ErrSigningKeyNotFound", err)
			}
			if err := admin.Revoke(ctx, domain.System(), kid); err != nil {
				t.Fatal(err)
			}
			for _, typ := range []domain.AuditType{domain.AuditKeyRotated, domain.AuditKeyRevoked} {
				if got := embedder.calls[typ]; got != tc.wantCalls {
					t.Errorf("RecordEvent(%s) called %d times, want %d", typ, got, tc.wantCalls)
				}
				got, err := log.Events(ctx, ports.AuditFilter{Type: typ})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].ID == "" || got[0].Time.IsZero() || got[0].Family != kid {
					t.Errorf("%s events %+v, want one, filled in, of key %s", typ, got, kid)
				}
			}
		})
	}
}
