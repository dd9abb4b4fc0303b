package josejwt_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

// Another replica learns of a revoked key at its next reload, says so
// once through KeysRevoked, and answers KeyRevoked from memory.
func TestAReloadFindingARevokedKeySaysSoOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newEdDSA(t, nil)
	var calls atomic.Int32
	b, err := josejwt.New(ctx, josejwt.Options{Keys: a.store, Clock: a.clock, KeysRevoked: func() { calls.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Verifier().AccessToken(ctx, a.issue(t, a.claims(domain.AccessToken, 10*time.Minute)))
	if err != nil || c.KeyID != a.kid {
		t.Fatalf("verify = %+v, %v; want the claims naming key %s", c, err, a.kid)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 || b.Verifier().KeyRevoked(a.kid) {
		t.Fatalf("before any revocation: %d calls, KeyRevoked = %v", n, b.Verifier().KeyRevoked(a.kid))
	}
	if err := a.tok.Revoke(ctx, a.kid); err != nil {
		t.Fatal(err)
	}
	if b.Verifier().KeyRevoked(a.kid) {
		t.Fatal("KeyRevoked read the store before a reload")
	}
	for range 2 {
		if err := b.Reload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("KeysRevoked called %d times over two reloads, want once", n)
	}
	if !b.Verifier().KeyRevoked(a.kid) || b.Verifier().KeyRevoked("other") || b.Verifier().KeyRevoked("") {
		t.Fatal("KeyRevoked does not name exactly the revoked key")
	}
}

// KeepLoaded reloads keys gone stale without any request.
func TestKeepLoadedReloadsWithoutRequests(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	a := newEdDSA(t, nil)
	revoked := make(chan struct{}, 1)
	b, err := josejwt.New(ctx, josejwt.Options{Keys: a.store, Clock: a.clock,
		KeysRevoked: func() { revoked <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.KeepLoaded(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	if err := a.tok.Revoke(ctx, a.kid); err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(josejwt.DefaultKeyReload)
	select {
	case <-revoked:
	case <-time.After(30 * time.Second):
		t.Fatal("KeepLoaded did not reload stale keys")
	}
}
