package application_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// lockedBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAuthenticationLogsNeverHoldPasswordsOrTokens pins, in the package
// that writes the authentication log lines (login, refresh, logout and
// their audit events; ARCHITECTURE.md, "Threat model"), that no line holds
// a password or a token, at debug level, through a good login, a bad
// password, a throttled login, a refresh, a refresh token's reuse and a
// logout.
func TestAuthenticationLogsNeverHoldPasswordsOrTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const password = "Xy-distinctive-passw0rd"
	var buf lockedBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newAuthEnv(t, authOpts{})
	e.addUser(t, "logger", password, true)
	audit := application.NewAuditTrail(application.AuditTrailDeps{Store: memstore.NewAuditLog(), Log: log, Clock: e.clock, IDs: &seqIDs{}})
	validator, err := application.NewCredentialValidator(ctx, application.RepoUserLookup{Users: e.users}, e.hasher, e.hasher)
	if err != nil {
		t.Fatal(err)
	}
	login, err := application.NewLogin(application.LoginDeps{Validator: validator, Tokens: e.tokens, Log: log, Audit: audit,
		Throttle: memstore.NewLoginThrottle(), Limits: application.ThrottleLimits{PerUsername: 3, PerAddress: 100, Window: time.Minute},
		Users: e.users, Hasher: e.hasher})
	if err != nil {
		t.Fatal(err)
	}
	refresh, err := application.NewRefresh(application.RefreshDeps{Verifier: e.verifier, Lookup: application.RepoUserLookup{Users: e.users},
		Tokens: e.tokens, Log: log, Audit: audit, Revoked: e.revoked})
	if err != nil {
		t.Fatal(err)
	}

	pair, err := login.Execute(ctx, application.LoginInput{Username: "logger", Password: password, ClientAddr: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // the fourth is throttled
		_, _ = login.Execute(ctx, application.LoginInput{Username: "logger", Password: password + "-wrong", ClientAddr: "10.0.0.1"})
	}
	next, err := refresh.Execute(ctx, pair.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refresh.Execute(ctx, pair.RefreshToken); domain.KindOf(err) != domain.KindUnauthenticated {
		t.Fatalf("reuse of a refresh token: %v, want unauthenticated", err)
	}
	p, err := e.verifier.AccessToken(ctx, next.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.logout.Execute(ctx, domain.AsPrincipal(domain.Principal{ID: p.Subject, FamilyID: p.FamilyID})); err != nil {
		t.Fatal(err)
	}

	out := buf.String()
	for _, line := range []string{"login failed", "login throttled", "refresh token reuse detected"} {
		if !strings.Contains(out, line) {
			t.Fatalf("the log has no %q line; the test would prove nothing:\n%.2000s", line, out)
		}
	}
	for name, secret := range map[string]string{
		"the password":                password,
		"the access token":            pair.AccessToken,
		"the refresh token":           pair.RefreshToken,
		"the second access token":     next.AccessToken,
		"the second refresh token":    next.RefreshToken,
		"a token's signature segment": pair.RefreshToken[strings.LastIndexByte(pair.RefreshToken, '.')+1:],
	} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %s", name)
		}
	}
}
