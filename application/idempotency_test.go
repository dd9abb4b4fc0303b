package application_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
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

	t.Run("keys belong to an assignment: the same key and input in another is another create", func(t *testing.T) {
		t.Parallel()
		records := &sharedRecords{}
		stores, err := application.NewAssignments(
			application.Assignment{Name: "user", EntityKey: "userCache", Repo: records.repo(), Policy: domain.PolicyOwner},
			application.Assignment{Name: "org", EntityKey: "orgCache", Repo: records.repo(), Policy: domain.PolicyOwner},
		)
		if err != nil {
			t.Fatal(err)
		}
		uc, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: newClock(), IDs: &seqIDs{}})
		if err != nil {
			t.Fatal(err)
		}
		create := func(a string) domain.Entry {
			t.Helper()
			e, err := uc.Create.Execute(ctx, application.CreateCacheInput{Assignment: a, Actor: user(alice), Cache: input("k", alice),
				Idempotency: &application.IdempotencyKey{Key: "same", RequestHash: "h"}})
			if err != nil {
				t.Fatalf("create in %s: %v", a, err)
			}
			return e
		}
		inUser, inOrg := create("user"), create("org")
		if inOrg.ID == inUser.ID {
			t.Fatalf("the create in org answered user's entry %s instead of creating its own", inUser.ID)
		}
		if got, err := uc.Get.Execute(ctx, application.GetCacheInput{Assignment: "org", Actor: user(alice), ID: inOrg.ID}); err != nil || got.ID != inOrg.ID {
			t.Fatalf("org's entry %s: %+v, %v", inOrg.ID, got, err)
		}
		if again := create("org"); again.ID != inOrg.ID {
			t.Fatalf("the retry in org answered %s, want org's entry %s", again.ID, inOrg.ID)
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

// sharedRecords keeps the idempotency records of several repositories in
// one place, as the SQL stores keep them in one table per database
// (docs/storage.md), where memstore keeps them per repository: a scope
// that left out the assignment would meet another assignment's record.
type sharedRecords struct {
	mu   sync.Mutex
	recs map[[2]string]ports.IdempotencyRecord
}

// repo returns a new repository whose idempotency records are in s.
func (s *sharedRecords) repo() ports.CacheRepository {
	return recordsIn{memstore.NewCacheRepository(), s}
}

type recordsIn struct {
	*memstore.CacheRepository
	s *sharedRecords
}

// For keeps the records: memory bounds no caller.
func (r recordsIn) For(domain.Caller) ports.CacheRepository { return r }

func (r recordsIn) CreateIdempotent(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota, rec ports.IdempotencyRecord) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	k := [2]string{rec.Scope, rec.Key}
	if old, ok := r.s.recs[k]; ok && old.ExpiresAt.After(now) {
		return domain.ErrIdempotencyKeyInProgress
	}
	if err := r.Create(ctx, e, now, q); err != nil {
		return err
	}
	if r.s.recs == nil {
		r.s.recs = map[[2]string]ports.IdempotencyRecord{}
	}
	r.s.recs[k] = rec
	return nil
}

func (r recordsIn) IdempotencyRecord(_ context.Context, scope, key string, now time.Time) (ports.IdempotencyRecord, bool, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	rec, ok := r.s.recs[[2]string{scope, key}]
	return rec, ok && rec.ExpiresAt.After(now), nil
}
