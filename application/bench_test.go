package application_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// BenchmarkRefresh measures one rotation: verify the refresh token, look
// up its subject, sign a new pair and rotate in the (in-memory) store.
func BenchmarkRefresh(b *testing.B) {
	e := newAuthEnv(b, authOpts{})
	ctx := context.Background()
	if _, err := e.admin.Add(ctx, domain.System(), application.AddUserInput{Username: "alice", Password: pw, Active: true}); err != nil {
		b.Fatal(err)
	}
	pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if pair, err = e.refresher.Execute(ctx, pair.RefreshToken); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticate measures the guard's work per request.
func BenchmarkAuthenticate(b *testing.B) {
	e := newAuthEnv(b, authOpts{})
	ctx := context.Background()
	if _, err := e.admin.Add(ctx, domain.System(), application.AddUserInput{Username: "alice", Password: pw, Active: true}); err != nil {
		b.Fatal(err)
	}
	pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.auth.Execute(ctx, pair.AccessToken); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateWithRevokedSessions is BenchmarkAuthenticate with
// 10 000 families in the set of revoked sessions: the check the guard adds
// (docs/api.md, "Authentication") is one concurrent-map lookup.
func BenchmarkAuthenticateWithRevokedSessions(b *testing.B) {
	e := newAuthEnv(b, authOpts{})
	ctx := context.Background()
	if _, err := e.admin.Add(ctx, domain.System(), application.AddUserInput{Username: "alice", Password: pw, Active: true}); err != nil {
		b.Fatal(err)
	}
	pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10000 {
		e.revoked.Add("revoked-family-" + strconv.Itoa(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.auth.Execute(ctx, pair.AccessToken); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateCache measures the create use case on the in-memory
// repository: validation, id, expiry and the insert.
func BenchmarkCreateCache(b *testing.B) {
	env := newCacheEnv(b, domain.PolicyOwner, 0)
	ctx := context.Background()
	in := input("k", alice)
	in.ExpiresIn = str("1h")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		in.Key = "k" + strconv.Itoa(i)
		if _, err := env.api.Create(ctx, "user", in, application.AsActor(user(alice))); err != nil {
			b.Fatal(err)
		}
	}
}
