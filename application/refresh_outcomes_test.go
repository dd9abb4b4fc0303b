package application_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// spyRefreshStore records the outcome of every RotateRefresh of the
// memstore it wraps; with fail set it fails them instead.
type spyRefreshStore struct {
	ports.RefreshStore
	outcomes []domain.RefreshVerdict
	fail     error
}

// For keeps the spy: memory bounds no caller.
func (s *spyRefreshStore) For(domain.Caller) ports.RefreshStore { return s }

func (s *spyRefreshStore) RotateRefresh(ctx context.Context, p domain.Claims, next domain.RefreshRecord, now time.Time, grace time.Duration,
	events ...domain.AuditEvent) (ports.Rotation, error) {
	if s.fail != nil {
		return ports.Rotation{}, s.fail
	}
	rot, err := s.RefreshStore.RotateRefresh(ctx, p, next, now, grace, events...)
	s.outcomes = append(s.outcomes, rot.Outcome)
	return rot, err
}

// countingIssuer counts the tokens it signs.
type countingIssuer struct {
	ports.TokenIssuer
	access, refresh int
}

func (i *countingIssuer) AccessToken(ctx context.Context, c domain.Claims) (string, error) {
	i.access++
	return i.TokenIssuer.AccessToken(ctx, c)
}

func (i *countingIssuer) RefreshToken(ctx context.Context, c domain.Claims) (string, error) {
	i.refresh++
	return i.TokenIssuer.RefreshToken(ctx, c)
}

// refreshMetrics records the refresh outcomes counted.
type refreshMetrics struct{ outcomes []string }

func (*refreshMetrics) LoginOutcome(string)        {}
func (m *refreshMetrics) RefreshOutcome(o string)  { m.outcomes = append(m.outcomes, o) }
func (*refreshMetrics) CacheEntryCreated(string)   {}
func (*refreshMetrics) CacheRowsSwept(string, int) {}
func (*refreshMetrics) AuditEvent(string)          {}

// TestRefreshOutcomes follows each outcome of the store through Refresh:
// how often the store is asked, the signature checked and tokens signed
// (the access token only once the store decided), what the caller gets
// and which outcome is counted.
func TestRefreshOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type env struct {
		e       *authEnv
		r       *application.Refresh
		store   *spyRefreshStore
		issuer  *countingIssuer
		checks  *countingVerifier
		metrics *refreshMetrics
		log     *countingLog
	}
	newEnv := func(t *testing.T) env {
		e := newAuthEnv(t, authOpts{})
		store := &spyRefreshStore{RefreshStore: e.refresh}
		issuer := &countingIssuer{TokenIssuer: e.tokens.Issuer}
		tokens := e.tokens
		tokens.Refresh, tokens.Issuer = store, issuer
		v := &countingVerifier{TokenVerifier: e.verifier}
		m := &refreshMetrics{}
		log := &countingLog{AuditLog: memstore.NewAuditLog(), calls: map[domain.AuditType]int{}}
		r, err := application.NewRefresh(application.RefreshDeps{Verifier: v, Lookup: application.RepoUserLookup{Users: e.users},
			Tokens: tokens, Revoked: e.revoked, Metrics: m, ReuseGrace: 10 * time.Second,
			Audit: application.NewAuditTrail(application.AuditTrailDeps{Store: log, Clock: e.clock, IDs: &seqIDs{}})})
		if err != nil {
			t.Fatal(err)
		}
		e.addUser(t, "alice", pw, true)
		return env{e, r, store, issuer, v, m, log}
	}
	// used logs alice in, refreshes once and returns the used token and
	// the live one, every count reset.
	used := func(t *testing.T, v env) (string, string) {
		t.Helper()
		first := v.e.loginAlice(t).RefreshToken
		pair, err := v.r.Execute(ctx, first, domain.Client{})
		if err != nil {
			t.Fatal(err)
		}
		v.store.outcomes, v.metrics.outcomes = nil, nil
		v.issuer.access, v.issuer.refresh = 0, 0
		v.checks.checked.Store(0)
		return first, pair.RefreshToken
	}
	type want struct {
		err            error
		outcomes       []domain.RefreshVerdict // the store's answers, in order
		checks         int32
		access, signed int // access tokens signed; refresh tokens signed
		metric         string
	}
	check := func(t *testing.T, v env, pair domain.TokenPair, err error, w want) {
		t.Helper()
		switch {
		case w.err == nil && (err != nil || pair.AccessToken == "" || pair.RefreshToken == ""):
			t.Errorf("Execute = %+v, %v; want a pair", pair, err)
		case w.err != nil && (!errors.Is(err, w.err) || pair != domain.TokenPair{}):
			t.Errorf("Execute = %+v, %v; want no pair and %v", pair, err, w.err)
		}
		if !slices.Equal(v.store.outcomes, w.outcomes) {
			t.Errorf("the store answered %v, want %v", v.store.outcomes, w.outcomes)
		}
		if n := v.checks.checked.Load(); n != w.checks {
			t.Errorf("%d signature checks, want %d", n, w.checks)
		}
		if v.issuer.access != w.access || v.issuer.refresh != w.signed {
			t.Errorf("signed %d access and %d refresh tokens, want %d and %d", v.issuer.access, v.issuer.refresh, w.access, w.signed)
		}
		if got := v.metrics.outcomes[len(v.metrics.outcomes)-1]; got != w.metric {
			t.Errorf("counted %q, want %q", got, w.metric)
		}
	}

	t.Run("the live token rotates: the store is asked once, no signature is checked, each token signed once", func(t *testing.T) {
		t.Parallel()
		v := newEnv(t)
		_, live := used(t, v)
		pair, err := v.r.Execute(ctx, live, domain.Client{})
		check(t, v, pair, err, want{outcomes: []domain.RefreshVerdict{domain.RefreshRotate}, access: 1, signed: 1, metric: "rotated"})
	})

	t.Run("a just-used token is unproven unchecked, then reissued: the family's live token is issued again", func(t *testing.T) {
		t.Parallel()
		v := newEnv(t)
		first, live := used(t, v)
		pair, err := v.r.Execute(ctx, first, domain.Client{})
		check(t, v, pair, err, want{outcomes: []domain.RefreshVerdict{domain.RefreshUnproven, domain.RefreshReissue}, checks: 1,
			access: 1, signed: 2, metric: "reissued"})
		if pair.RefreshToken != live {
			t.Error("the reissued refresh token is not the family's live one")
		}
	})

	t.Run("a used token past the grace is reuse: the family is revoked and recorded, no access token signed", func(t *testing.T) {
		t.Parallel()
		v := newEnv(t)
		first, live := used(t, v)
		v.e.clock.Advance(time.Minute)
		pair, err := v.r.Execute(ctx, first, domain.Client{})
		check(t, v, pair, err, want{err: domain.ErrUnauthenticated, outcomes: []domain.RefreshVerdict{domain.RefreshUnproven, domain.RefreshReused},
			checks: 1, signed: 1, metric: "reused"})
		if n := v.log.calls[domain.AuditRefreshReused]; n != 1 {
			t.Errorf("%d refresh.reused events, want 1", n)
		}
		if _, err := v.r.Execute(ctx, live, domain.Client{}); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Errorf("the live token after the reuse: %v, want ErrUnauthenticated (the family is revoked)", err)
		}
	})

	t.Run("a token of a family logged out is refused after its signature is checked", func(t *testing.T) {
		t.Parallel()
		v := newEnv(t)
		_, live := used(t, v)
		if err := v.e.refresh.RevokeFamily(ctx, familyOf(t, v.e, live), v.e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		pair, err := v.r.Execute(ctx, live, domain.Client{})
		check(t, v, pair, err, want{err: domain.ErrUnauthenticated, outcomes: []domain.RefreshVerdict{domain.RefreshUnproven, domain.RefreshRefused},
			checks: 1, signed: 1, metric: "rejected"})
	})

	t.Run("a forged live token is unproven, its signature refused: the store is asked once", func(t *testing.T) {
		t.Parallel()
		v := newEnv(t)
		_, live := used(t, v)
		pair, err := v.r.Execute(ctx, tampered(live), domain.Client{})
		check(t, v, pair, err, want{err: domain.ErrUnauthenticated, outcomes: []domain.RefreshVerdict{domain.RefreshUnproven},
			checks: 1, signed: 1, metric: "rejected"})
	})

	t.Run("a store failure is an error, counted rejected, with no access token signed", func(t *testing.T) {
		t.Parallel()
		v := newEnv(t)
		_, live := used(t, v)
		v.store.fail = errors.New("the database is gone")
		pair, err := v.r.Execute(ctx, live, domain.Client{})
		if err == nil || domain.KindOf(err) == domain.KindUnauthenticated || !errors.Is(err, v.store.fail) {
			t.Errorf("Execute = %v, want the store's failure", err)
		}
		if pair != (domain.TokenPair{}) || v.issuer.access != 0 || v.metrics.outcomes[len(v.metrics.outcomes)-1] != "rejected" {
			t.Errorf("pair %+v, %d access tokens signed, counted %q; want none, none, rejected", pair, v.issuer.access, v.metrics.outcomes[len(v.metrics.outcomes)-1])
		}
	})
}

// familyOf returns the family (sid) of a refresh token, verified.
func familyOf(t *testing.T, e *authEnv, token string) string {
	t.Helper()
	c, err := e.verifier.RefreshToken(context.Background(), token)
	if err != nil || c.FamilyID == "" {
		t.Fatalf("verify: %+v, %v", c, err)
	}
	return c.FamilyID
}
