package josejwt_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

// replicaOf returns a second Tokens on e's store and clock, whose keys
// never go stale by age (KeyReload an hour): only its polls, or a token
// naming an unknown kid, make it read them again.
func replicaOf(t *testing.T, e *env) *env {
	t.Helper()
	tok, err := josejwt.New(context.Background(), josejwt.Options{Keys: e.store, Clock: e.clock, KeyReload: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return &env{name: "replica", tok: tok, clock: e.clock, store: e.store}
}

// jwksWithin waits until r's JWKS lists exactly want, or fails t after
// bound (KeepLoaded polls every KeyPoll; the bound leaves room for a busy
// machine).
func jwksWithin(t *testing.T, r *env, bound time.Duration, what string, want ...string) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(bound)
	for {
		set, _ := jwks(t, r.tok)
		if slices.Equal(kids(set), want) {
			t.Logf("%s: after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the replica's JWKS is %v after %v, want %v", what, kids(set), bound, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A replica running KeepLoaded lists a key published by another process
// within a second, and drops it as soon when it is revoked, without
// serving a request and with its periodic reload an hour away: "published
// before any replica signs" holds for any accepted publish-ahead.
func TestKeepLoadedListsAPublishedKeyWithinASecond(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	a := newEdDSA(t, nil)
	b := replicaOf(t, a)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.tok.KeepLoaded(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	key, err := a.tok.Rotate(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	jwksWithin(t, b, 2*time.Second, "the published key", key.ID, a.kid)
	if err := a.tok.Revoke(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	jwksWithin(t, b, 2*time.Second, "the revoked published key", a.kid)
}

// A poll that finds the stored keys as the ring was built reads them
// once and reloads nothing; one that finds them changed reloads.
func TestAPollReloadsOnlyWhenTheKeysChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newEdDSA(t, nil)
	b := replicaOf(t, a)
	loads := a.store.loads.Load()
	for range 5 {
		josejwt.Poll(ctx, b.tok)
	}
	if n := a.store.loads.Load() - loads; n != 5 {
		t.Errorf("5 polls of unchanged keys read the store %d times, want 5 (no reload)", n)
	}
	key, err := a.tok.Rotate(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	loads = a.store.loads.Load()
	josejwt.Poll(ctx, b.tok)
	if n := a.store.loads.Load() - loads; n != 2 {
		t.Errorf("a poll of changed keys read the store %d times, want 2 (the look and the reload)", n)
	}
	if set, _ := jwks(t, b.tok); !slices.Equal(kids(set), []string{key.ID, a.kid}) {
		t.Errorf("after the poll the replica's JWKS is %v, want [%s %s]", kids(set), key.ID, a.kid)
	}
	// A change to any field counts: here a revocation.
	if err := a.store.RevokeSigningKey(ctx, key.ID, a.clock.Now()); err != nil {
		t.Fatal(err)
	}
	josejwt.Poll(ctx, b.tok)
	if set, _ := jwks(t, b.tok); !slices.Equal(kids(set), []string{a.kid}) {
		t.Errorf("after a revocation and a poll the replica's JWKS is %v, want [%s]", kids(set), a.kid)
	}
}

// A positive publish-ahead shorter than the key set's max-age is
// refused: a client caching the JWKS for its max-age could meet a token
// of the new key before it knows the key. Zero (the default) and a
// negative value (at once) are not.
func TestAPublishAheadBelowTheKeySetMaxAgeIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ahead time.Duration
		ok    bool
	}{
		{time.Second, false}, {3 * time.Second, false}, {domain.KeySetMaxAge - time.Millisecond, false},
		{domain.KeySetMaxAge, true}, {0, true}, {-1, true}, {2 * time.Minute, true},
	} {
		_, err := josejwt.New(context.Background(), josejwt.Options{Keys: &memKeys{}, Clock: newClock(), KeyPublishAhead: c.ahead})
		if c.ok != (err == nil) || !c.ok && !strings.Contains(err.Error(), "max-age") {
			t.Errorf("KeyPublishAhead %v: New = %v, want accepted %v (or an error naming the max-age)", c.ahead, err, c.ok)
		}
	}
}
