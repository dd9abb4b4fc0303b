package application_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// TestRefreshKeepsOneFamilyPerSession refreshes one session many times,
// retrying within the grace now and then: the store holds one family,
// whatever the number of refreshes.
func TestRefreshKeepsOneFamilyPerSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAuthEnv(t, authOpts{})
	e.addUser(t, "alice", pw, true)
	graceful := e.graceful(t, 10*time.Second)
	pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		e.clock.Advance(time.Second)
		next, err := graceful.Execute(ctx, pair.RefreshToken, domain.Client{})
		if err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
		if i%50 == 0 {
			if _, err := graceful.Execute(ctx, pair.RefreshToken, domain.Client{}); err != nil {
				t.Fatalf("a retry within grace at refresh %d: %v", i, err)
			}
		}
		pair = next
	}
	if n := e.refresh.Families(); n != 1 {
		t.Fatalf("the store holds %d families after 200 refreshes of one session, want 1", n)
	}
}

// TestRefreshReusedEventIsStoredWithTheRevocation detects a reuse with
// the stores writing the events of their changes (the event is stored by
// the refresh store, with the revocation, and not again by the auditor)
// and with an embedder's audit log (the auditor records it once, after
// the revocation). Either way the family is revoked and the event filled
// in.
func TestRefreshReusedEventIsStoredWithTheRevocation(t *testing.T) {
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
			ctx := ports.WithRequestID(context.Background(), "rid-reuse")
			log := memstore.NewAuditLog()
			o := authOpts{}
			if tc.withChanges {
				o.storesLog = log
			}
			e := newAuthEnv(t, o)
			embedder := &countingLog{AuditLog: log, calls: map[domain.AuditType]int{}}
			a := application.NewAuditTrail(application.AuditTrailDeps{Store: embedder, Clock: e.clock, IDs: &seqIDs{},
				StoredWithChanges: tc.withChanges})
			refresher, err := application.NewRefresh(application.RefreshDeps{Verifier: mustVerifier(t, e),
				Lookup: application.RepoUserLookup{Users: e.users}, Tokens: e.tokens, Audit: a, Revoked: e.revoked})
			if err != nil {
				t.Fatal(err)
			}
			alice := e.addUser(t, "alice", pw, true)
			first, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
			if err != nil {
				t.Fatal(err)
			}
			second, err := refresher.Execute(ctx, first.RefreshToken, domain.Client{})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := log.Events(ctx, ports.AuditFilter{Type: domain.AuditRefreshReused}); err != nil || len(got) != 0 {
				t.Fatalf("events after a rotation: %+v, %v; want none", got, err)
			}
			if _, err := refresher.Execute(ctx, first.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("reuse: %v", err)
			}
			if _, err := refresher.Execute(ctx, second.RefreshToken, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("the family must be revoked: %v", err)
			}
			if got := embedder.calls[domain.AuditRefreshReused]; got != tc.wantCalls {
				t.Errorf("RecordEvent(refresh.reused) called %d times, want %d", got, tc.wantCalls)
			}
			got, err := log.Events(ctx, ports.AuditFilter{Type: domain.AuditRefreshReused})
			if err != nil || len(got) != 1 {
				t.Fatalf("refresh.reused events %+v, %v; want one", got, err)
			}
			if ev := got[0]; ev.ID == "" || ev.Time.IsZero() || ev.UserID != alice.ID || ev.Username != "alice" ||
				ev.Family == "" || ev.RequestID != "rid-reuse" {
				t.Errorf("event %+v, want one filled in, of alice's family, with the request id", ev)
			}
		})
	}
}
