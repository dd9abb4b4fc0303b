package application_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// setupFixture is the set-up link over memstore with a manual clock and
// a counter for random bytes, the audit log the stores' own.
type setupFixture struct {
	clock interface{ Advance(time.Duration) }
	users *memstore.UserRepository
	log   *memstore.AuditLog
	ua    *application.Users
	admin *application.Users
	link  *application.FirstAdmin
}

// countingSecrets returns n bytes of a different value on each call.
type countingSecrets struct {
	mu sync.Mutex
	n  byte
}

func (s *countingSecrets) Secret(n int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return bytes.Repeat([]byte{s.n}, n), nil
}

const setupPassword = "a password of 27 bytes long"

func newSetupFixture(t *testing.T, opts application.FirstAdminOptions) *setupFixture {
	t.Helper()
	clock, ids := newClock(), &seqIDs{}
	f := &setupFixture{clock: clock, log: memstore.NewAuditLog()}
	refresh := memstore.NewRefreshStore(nil)
	f.users = memstore.NewUserRepository(f.log, refresh)
	hasher, err := passhash.New(passhash.Options{BcryptCost: passhash.MinBcryptCost})
	if err != nil {
		t.Fatal(err)
	}
	auditor := application.NewAuditTrail(application.AuditTrailDeps{Store: f.log, Clock: clock, IDs: ids, StoredWithChanges: true})
	check, err := application.NewAdminCheck(f.users, clock)
	if err != nil {
		t.Fatal(err)
	}
	if f.admin, err = application.NewUsers(application.UsersDeps{Users: f.users, Hasher: hasher, Clock: clock, IDs: ids,
		Audit: auditor, Check: check, Refresh: refresh}); err != nil {
		t.Fatal(err)
	}
	f.ua = f.admin
	if f.link, err = application.NewFirstAdmin(f.ua, f.admin.HasAdmin, clock, &countingSecrets{}, opts); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *setupFixture) issue(t *testing.T) application.SetupLink {
	t.Helper()
	l, err := f.link.Issue(context.Background())
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return l
}

func setupIn(token, username string) application.SetupInput {
	return application.SetupInput{Token: token, Username: username, Password: setupPassword, Local: true}
}

func TestSetUpLinkIsARandomTokenValidForThirtyMinutes(t *testing.T) {
	t.Parallel()
	f := newSetupFixture(t, application.FirstAdminOptions{})
	l := f.issue(t)
	if len(l.Token) != 43 || strings.ContainsAny(l.Token, "+/=") {
		t.Errorf("token %d characters, want 43 of base64url without padding", len(l.Token))
	}
	if want := newClock().Now().Add(30 * time.Minute); !l.Expires.Equal(want) {
		t.Errorf("expires %v, want %v", l.Expires, want)
	}
	again := f.issue(t)
	if again.Token == l.Token {
		t.Error("a second link has the first one's token")
	}
	if _, err := f.link.Create(context.Background(), setupIn(l.Token, "root")); !errors.Is(err, domain.ErrSetupLinkInvalid) {
		t.Errorf("the replaced link's token: %v, want SETUP_LINK_INVALID", err)
	}
}

func TestSetUpLinkCreatesTheFirstAdminOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSetupFixture(t, application.FirstAdminOptions{})
	l := f.issue(t)
	u, err := f.link.Create(ctx, setupIn(l.Token, " root "))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if u.Username != "root" || !u.Admin || !u.Active {
		t.Errorf("user %q admin=%v active=%v, want the active admin root", u.Username, u.Admin, u.Active)
	}
	if has, err := f.admin.HasAdmin(ctx); err != nil || !has {
		t.Errorf("HasAdmin after set-up = %v, %v", has, err)
	}
	if _, err := f.link.Create(ctx, setupIn(l.Token, "root2")); !errors.Is(err, domain.ErrSetupLinkUsed) {
		t.Errorf("the link used again: %v, want SETUP_LINK_USED", err)
	}
	if _, err := f.link.Issue(ctx); !errors.Is(err, domain.ErrAdminExists) {
		t.Errorf("Issue with an admin: %v, want ADMIN_EXISTS", err)
	}
	events, err := f.log.Events(ctx, ports.AuditFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[domain.AuditType]domain.AuditEvent{}
	for _, e := range events {
		got[e.Type] = e
	}
	for _, typ := range []domain.AuditType{domain.AuditUserAdded, domain.AuditUserAdminGranted} {
		e, ok := got[typ]
		if !ok {
			t.Errorf("no %s event in %+v", typ, events)
			continue
		}
		if e.UserID != u.ID || e.Detail != application.SetupDetail || e.ActorID != "" {
			t.Errorf("%s event %+v, want user %s, detail %q, no actor", typ, e, u.ID, application.SetupDetail)
		}
	}
	if len(events) != 2 {
		t.Errorf("%d events, want 2", len(events))
	}
}

func TestSetUpLinkRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		// prepare runs after Issue and returns the input to send.
		prepare func(t *testing.T, f *setupFixture, token string) application.SetupInput
		opts    application.FirstAdminOptions
		want    error // nil: a validation error
		// usable: the link still works afterwards.
		usable bool
	}{
		{name: "a wrong token is invalid", want: domain.ErrSetupLinkInvalid, usable: true,
			prepare: func(_ *testing.T, _ *setupFixture, token string) application.SetupInput {
				return setupIn(token[:len(token)-1]+"x", "root")
			}},
		{name: "an empty token is invalid", want: domain.ErrSetupLinkInvalid, usable: true,
			prepare: func(*testing.T, *setupFixture, string) application.SetupInput { return setupIn("", "root") }},
		{name: "the token after thirty minutes has expired", want: domain.ErrSetupLinkExpired,
			prepare: func(_ *testing.T, f *setupFixture, token string) application.SetupInput {
				f.clock.Advance(30 * time.Minute)
				return setupIn(token, "root")
			}},
		{name: "a request from another machine is refused", want: domain.ErrSetupNotLocal, usable: true,
			prepare: func(_ *testing.T, _ *setupFixture, token string) application.SetupInput {
				in := setupIn(token, "root")
				in.Local = false
				return in
			}},
		{name: "a short password is a validation error", usable: true,
			prepare: func(_ *testing.T, _ *setupFixture, token string) application.SetupInput {
				in := setupIn(token, "root")
				in.Password = "short"
				return in
			}},
		{name: "an empty username is a validation error", usable: true,
			prepare: func(_ *testing.T, _ *setupFixture, token string) application.SetupInput { return setupIn(token, " ") }},
		{name: "a taken username is a conflict", want: domain.ErrUserExists, usable: true,
			prepare: func(t *testing.T, f *setupFixture, token string) application.SetupInput {
				if _, err := f.ua.Add(ctx, domain.System(), application.AddUserInput{Username: "Root", Password: setupPassword, Active: true}); err != nil {
					t.Fatal(err)
				}
				return setupIn(token, "root")
			}},
		{name: "an admin made meanwhile spends the link", want: domain.ErrAdminExists,
			prepare: func(t *testing.T, f *setupFixture, token string) application.SetupInput {
				if _, err := f.ua.Add(ctx, domain.System(), application.AddUserInput{Username: "cli", Password: setupPassword, Active: true, Admin: true}); err != nil {
					t.Fatal(err)
				}
				return setupIn(token, "root")
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newSetupFixture(t, c.opts)
			l := f.issue(t)
			_, err := f.link.Create(ctx, c.prepare(t, f, l.Token))
			if c.want == nil && domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("Create: %v, want a validation error", err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("Create: %v, want %v", err, c.want)
			}
			_, err = f.link.Create(ctx, setupIn(l.Token, "second"))
			if c.usable && err != nil {
				t.Errorf("the link after the refusal: %v, want it still usable", err)
			}
			if !c.usable && err == nil {
				t.Error("the link after the refusal made an admin")
			}
		})
	}
}

func TestSetUpLinkFromAnywhereAcceptsARemoteRequest(t *testing.T) {
	t.Parallel()
	f := newSetupFixture(t, application.FirstAdminOptions{FromAnywhere: true})
	l := f.issue(t)
	in := setupIn(l.Token, "root")
	in.Local = false
	if _, err := f.link.Create(context.Background(), in); err != nil {
		t.Fatalf("Create from anywhere: %v", err)
	}
}

func TestSetUpLinkWithoutIssueAcceptsNoToken(t *testing.T) {
	t.Parallel()
	f := newSetupFixture(t, application.FirstAdminOptions{})
	if _, err := f.link.Create(context.Background(), setupIn("", "root")); !errors.Is(err, domain.ErrSetupLinkInvalid) {
		t.Errorf("Create before Issue: %v, want SETUP_LINK_INVALID", err)
	}
}

func TestSetUpLinkUsedTwiceAtOnceMakesOneAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSetupFixture(t, application.FirstAdminOptions{})
	l := f.issue(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.link.Create(ctx, setupIn(l.Token, "admin"+string(rune('a'+i))))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, domain.ErrSetupLinkUsed):
			t.Errorf("a loser got %v, want SETUP_LINK_USED", err)
		}
	}
	if won != 1 {
		t.Errorf("%d requests made an admin, want 1", won)
	}
	all, err := f.users.ListUsers(ctx)
	if err != nil || len(all) != 1 {
		t.Errorf("%d users (%v), want one", len(all), err)
	}
}

func TestSetUpLinkWaitGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	f := newSetupFixture(t, application.FirstAdminOptions{})
	entered, block := make(chan struct{}), make(chan struct{})
	defer close(block)
	slow, err := application.NewFirstAdmin(f.ua, func(ctx context.Context) (bool, error) {
		close(entered)
		<-block
		return false, nil
	}, newClock(), &countingSecrets{}, application.FirstAdminOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = slow.Issue(context.Background()) }()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := slow.Create(ctx, setupIn("x", "root")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Create while another call holds the link: %v, want the context's deadline", err)
	}
}
