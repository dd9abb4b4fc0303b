package application_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("the Go API replays a create made with the same key and input", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		key := application.WithIdempotencyKey("k-1")
		first, err := env.api.Create(ctx, "user", input("k", alice), key)
		if err != nil {
			t.Fatal(err)
		}
		env.clock.Advance(time.Minute)
		again, err := env.api.Create(ctx, "user", input("k", alice), key)
		if err != nil || again.ID != first.ID || !again.DateCreated.Equal(first.DateCreated) {
			t.Fatalf("retry = %+v, %v; want the first entry %s", again, err, first.ID)
		}
		other := input("k", alice)
		other.Data = []byte(`{"theme":"light"}`)
		if _, err := env.api.Create(ctx, "user", other, key); !errors.Is(err, domain.ErrIdempotencyKeyReused) {
			t.Fatalf("another input with the key = %v, want %v", err, domain.ErrIdempotencyKeyReused)
		}
		if _, err := env.api.Create(ctx, "user", input("k", alice)); !errors.Is(err, domain.ErrCacheEntityAlreadyExists) {
			t.Fatalf("the input without the key = %v, want a conflict", err)
		}
	})

	t.Run("keys belong to a caller: another user's same key is another create", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyAuthenticated, 0)
		in := func(who domain.Actor) application.CreateCacheInput {
			return application.CreateCacheInput{Assignment: "user", Actor: who, Cache: input("k", alice),
				Idempotency: &application.IdempotencyKey{Key: "same", RequestHash: "h"}}
		}
		if _, err := env.uc.Create.Execute(ctx, in(user(alice))); err != nil {
			t.Fatal(err)
		}
		if _, err := env.uc.Create.Execute(ctx, in(user(bob))); !errors.Is(err, domain.ErrCacheEntityAlreadyExists) {
			t.Fatalf("bob's create with alice's key = %v, want his own create (a conflict), not alice's answer", err)
		}
	})

	t.Run("an empty or overlong key is a validation error", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		for _, k := range []string{"", string(make([]byte, application.MaxIdempotencyKeyBytes+1))} {
			_, err := env.api.Create(ctx, "user", input("k", alice), application.WithIdempotencyKey(k))
			if domain.KindOf(err) != domain.KindInvalid {
				t.Errorf("key of %d bytes = %v, want a validation error", len(k), err)
			}
		}
	})

}
