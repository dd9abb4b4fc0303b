package application_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// countingVerifier counts the signature checks of refresh tokens; it reads
// them unchecked through the real verifier (ports.RefreshTokenReader).
type countingVerifier struct {
	ports.TokenVerifier
	checked atomic.Int32
}

func (v *countingVerifier) RefreshToken(ctx context.Context, token string) (domain.Claims, error) {
	v.checked.Add(1)
	return v.TokenVerifier.RefreshToken(ctx, token)
}

func (v *countingVerifier) ReadRefreshToken(ctx context.Context, token string) (domain.Claims, error) {
	return v.TokenVerifier.(ports.RefreshTokenReader).ReadRefreshToken(ctx, token)
}

// tampered is token with its signature changed and still canonical.
func tampered(token string) string {
	i := strings.LastIndexByte(token, '.') + 1
	c := byte('A')
	if token[i] == 'A' {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}

// uncheckedEnv is an authEnv whose Refresh counts signature checks and
// records its audit events in log.
func uncheckedEnv(t *testing.T, o authOpts) (*authEnv, *application.Refresh, *countingVerifier, *countingLog) {
	t.Helper()
	e := newAuthEnv(t, o)
	v := &countingVerifier{TokenVerifier: e.verifier}
	log := &countingLog{AuditLog: memstore.NewAuditLog(), calls: map[domain.AuditType]int{}}
	r, err := application.NewRefresh(application.RefreshDeps{Verifier: v, Validator: o.validator,
		Lookup: application.RepoUserLookup{Users: e.users}, Tokens: e.tokens, Revoked: e.revoked,
		Audit: application.NewAuditTrail(application.AuditTrailDeps{Store: log, Clock: e.clock, IDs: &seqIDs{}})})
	if err != nil {
		t.Fatal(err)
	}
	e.addUser(t, "alice", pw, true)
	return e, r, v, log
}

func (e *authEnv) loginAlice(t *testing.T) domain.TokenPair {
	t.Helper()
	pair, err := e.login.Execute(context.Background(), application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func TestRefreshOfTheLiveTokenChecksNoSignature(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, r, v, _ := uncheckedEnv(t, authOpts{})
	token := e.loginAlice(t).RefreshToken
	for i := range 3 {
		pair, err := r.Execute(ctx, token)
		if err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
		token = pair.RefreshToken
	}
	if n := v.checked.Load(); n != 0 {
		t.Errorf("%d signature checks for three refreshes of the live token, want 0", n)
	}
}

func TestRefreshWithExtraValidationChecksEverySignature(t *testing.T) {
	t.Parallel()
	e, r, v, _ := uncheckedEnv(t, authOpts{validator: acceptAll{}})
	if _, err := r.Execute(context.Background(), e.loginAlice(t).RefreshToken); err != nil {
		t.Fatal(err)
	}
	if n := v.checked.Load(); n != 1 {
		t.Errorf("%d signature checks with an extra validation, want 1: it must see verified claims only", n)
	}
}

func TestAForgedRefreshTokenChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("the live token's claims under another signature are refused, and the live token still rotates", func(t *testing.T) {
		t.Parallel()
		e, r, v, _ := uncheckedEnv(t, authOpts{})
		live := e.loginAlice(t).RefreshToken
		if _, err := r.Execute(ctx, tampered(live)); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("forged: %v, want ErrUnauthenticated", err)
		}
		if v.checked.Load() != 1 {
			t.Errorf("%d signature checks for the forged token, want 1", v.checked.Load())
		}
		if _, err := r.Execute(ctx, live); err != nil {
			t.Fatalf("the live token after the forgery: %v", err)
		}
	})

	t.Run("a used token's claims under another signature are not reuse: the family lives on", func(t *testing.T) {
		t.Parallel()
		e, r, _, log := uncheckedEnv(t, authOpts{})
		used := e.loginAlice(t).RefreshToken
		pair, err := r.Execute(ctx, used)
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Minute) // past the reuse grace
		if _, err := r.Execute(ctx, tampered(used)); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("forged used token: %v, want ErrUnauthenticated", err)
		}
		if n := log.calls[domain.AuditRefreshReused]; n != 0 {
			t.Errorf("%d refresh.reused events for a forged token, want 0", n)
		}
		if _, err := r.Execute(ctx, pair.RefreshToken); err != nil {
			t.Fatalf("the live token after a forged reuse: %v (the family must not be revoked)", err)
		}
		// The genuine used token is still reuse, found the verified way.
		if _, err := r.Execute(ctx, used); !errors.Is(err, domain.ErrUnauthenticated) || log.calls[domain.AuditRefreshReused] != 1 {
			t.Errorf("genuine reuse: %v, %d events; want ErrUnauthenticated and one refresh.reused", err, log.calls[domain.AuditRefreshReused])
		}
	})

	t.Run("a forged token past the session's end records nothing", func(t *testing.T) {
		t.Parallel()
		e, r, _, log := uncheckedEnv(t, authOpts{sessionMax: time.Hour, refreshTTL: 2 * time.Hour})
		live := e.loginAlice(t).RefreshToken
		e.clock.Advance(time.Hour + time.Second)
		if _, err := r.Execute(ctx, tampered(live)); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("forged: %v, want ErrUnauthenticated", err)
		}
		if n := log.calls[domain.AuditSessionExpired]; n != 0 {
			t.Errorf("%d session.expired events for a forged token, want 0", n)
		}
		if _, err := r.Execute(ctx, live); !errors.Is(err, domain.ErrUnauthenticated) || log.calls[domain.AuditSessionExpired] != 1 {
			t.Errorf("genuine token past the session: %v, %d events; want ErrUnauthenticated and one session.expired",
				err, log.calls[domain.AuditSessionExpired])
		}
	})
}

type acceptAll struct{}

func (acceptAll) ValidateToken(context.Context, domain.Claims) (bool, error) { return true, nil }

func TestARefreshTokenTheReaderRefusesCostsNoSignatureCheck(t *testing.T) {
	t.Parallel()
	e, r, v, _ := uncheckedEnv(t, authOpts{refreshTTL: time.Hour, sessionMax: 2 * time.Hour})
	expired := e.loginAlice(t).RefreshToken
	e.clock.Advance(time.Hour + time.Minute)
	for name, token := range map[string]string{"garbage": "a.b.c", "an expired token": expired, "an access token": e.loginAlice(t).AccessToken} {
		if _, err := r.Execute(context.Background(), token); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Errorf("%s: %v, want ErrUnauthenticated", name, err)
		}
	}
	if n := v.checked.Load(); n != 0 {
		t.Errorf("%d signature checks for tokens refused before it, want 0", n)
	}
}
