package application_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// auditedLogin is a login of e whose audit trail is the returned log.
func auditedLogin(t *testing.T, e *authEnv, limits application.ThrottleLimits, fold *domain.AuditFold) (*application.Login, *memstore.AuditLog) {
	t.Helper()
	log := memstore.NewAuditLog()
	a := application.NewAuditTrail(application.AuditTrailDeps{Store: log, Clock: e.clock, IDs: &seqIDs{}, Fold: fold})
	validator, err := application.NewCredentialValidator(context.Background(), application.RepoUserLookup{Users: e.users}, e.hasher, e.hasher)
	if err != nil {
		t.Fatal(err)
	}
	deps := application.LoginDeps{Validator: validator, Tokens: e.tokens, Audit: a}
	if limits.Window > 0 {
		deps.Throttle, deps.Limits = memstore.NewLoginThrottle(), limits
	}
	login, err := application.NewLogin(deps)
	if err != nil {
		t.Fatal(err)
	}
	return login, log
}

func auditEvents(t *testing.T, log ports.AuditLog) []domain.AuditEvent {
	t.Helper()
	es, err := log.Events(context.Background(), ports.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestLoginAuditIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	long := func(i int) string { return fmt.Sprintf("%05d", i) + strings.Repeat("u", 295) }

	t.Run("repeated failures of one username and address are one event with a count", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		e.addUser(t, "alice", pw, true)
		login, log := auditedLogin(t, e, application.ThrottleLimits{}, nil)
		const n = 12
		for range n {
			if _, err := login.Execute(ctx, application.LoginInput{Username: "alice", Password: "wrong-password", ClientAddr: "192.0.2.1"}); err == nil {
				t.Fatal("a wrong password logged in")
			}
			e.clock.Advance(time.Second)
		}
		got := auditEvents(t, log)
		if len(got) != 1 || got[0].Count != n || got[0].Reason != domain.AuditReasonBadPassword || got[0].Username != "alice" {
			t.Fatalf("events %+v, want one login.failed of alice with count %d", got, n)
		}
	})

	t.Run("throttled attempts of one address naming as many usernames are one event with a count", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		login, log := auditedLogin(t, e, application.ThrottleLimits{PerUsername: 10, PerAddress: 3, Window: 15 * time.Minute}, nil)
		const n = 40
		throttled := 0
		for i := range n {
			_, err := login.Execute(ctx, application.LoginInput{Username: long(i), Password: "wrong-password", ClientAddr: "198.51.100.1"})
			if domain.KindOf(err) == domain.KindTooMany {
				throttled++
			}
		}
		var throttledEvents []domain.AuditEvent
		for _, ev := range auditEvents(t, log) {
			if ev.Type == domain.AuditLoginThrottled {
				throttledEvents = append(throttledEvents, ev)
			}
		}
		if throttled != n-3 || len(throttledEvents) != 1 || throttledEvents[0].Count != throttled || throttledEvents[0].Username != "" {
			t.Fatalf("%d throttled attempts stored as %+v, want one event with their count and no username", throttled, throttledEvents)
		}
	})

	t.Run("failures naming a different 300-character username each add a bounded number of events a window", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		login, log := auditedLogin(t, e, application.ThrottleLimits{}, nil)
		const windows, perWindow = 3, 50
		for w := range windows {
			for i := range perWindow {
				_, _ = login.Execute(ctx, application.LoginInput{Username: long(w*perWindow + i), Password: "wrong-password", ClientAddr: "203.0.113.9"})
				e.clock.Advance(domain.DefaultAuditFold.Window / perWindow)
			}
		}
		got := auditEvents(t, log)
		// The clock starts on a minute, so each window holds its 50.
		if want := windows * (domain.DefaultAuditFold.Distinct + 1); len(got) != want {
			t.Fatalf("%d events for %d failures in %d windows, want %d", len(got), windows*perWindow, windows, want)
		}
		total := 0
		for _, ev := range got {
			total += ev.Attempts()
			if utf8.RuneCountInString(ev.Username) > domain.MaxAuditUsernameLen {
				t.Errorf("stored a username of %d characters", utf8.RuneCountInString(ev.Username))
			}
		}
		if total != windows*perWindow {
			t.Errorf("the counts add up to %d, want %d", total, windows*perWindow)
		}
	})

	t.Run("without a fold window every attempt is an event, its username still cut", func(t *testing.T) {
		t.Parallel()
		e := newAuthEnv(t, authOpts{})
		login, log := auditedLogin(t, e, application.ThrottleLimits{}, &domain.AuditFold{})
		for i := range 4 {
			_, _ = login.Execute(ctx, application.LoginInput{Username: long(i), Password: "wrong-password", ClientAddr: "203.0.113.9"})
		}
		got := auditEvents(t, log)
		if len(got) != 4 {
			t.Fatalf("%d events, want 4", len(got))
		}
		for _, ev := range got {
			if utf8.RuneCountInString(ev.Username) != domain.MaxAuditUsernameLen || ev.Username[5:] != strings.Repeat("u", 59) {
				t.Errorf("username %q, want the first 64 characters", ev.Username)
			}
		}
	})
}
