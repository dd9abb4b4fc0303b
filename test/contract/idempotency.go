package contract

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// CacheIdempotency runs the idempotency part of the ports.CacheRepository
// contract (README, "Idempotent retries"): a record is stored with its
// create or not at all, one per scope and key, read back with the entry as
// created, expired and purged after its lifetime; and, through the use
// case, a retry after a create whose answer was lost answers the first
// answer. Stores may share one table of records between the repositories
// newRepo returns, so every subtest uses scopes of its own.
func CacheIdempotency(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Helper()
	idemRecordTests(t, newRepo)
	idemUseCaseTests(t, newRepo)
}

// idemRecord returns a record for e under scope and key, expiring a day
// after cacheT0.
func idemRecord(scope, key string, e domain.Entry) ports.IdempotencyRecord {
	return ports.IdempotencyRecord{Scope: scope, Key: key, RequestHash: "hash-" + e.ID, Entry: e,
		ExpiresAt: cacheT0.Add(24 * time.Hour)}
}

// idemLookup reads the record of scope and key at now.
func idemLookup(t *testing.T, r ports.CacheRepository, scope, key string, now time.Time) (ports.IdempotencyRecord, bool) {
	t.Helper()
	rec, ok, err := r.IdempotencyRecord(t.Context(), scope, key, now)
	if err != nil {
		t.Fatalf("IdempotencyRecord(%s, %s) = %v", scope, key, err)
	}
	return rec, ok
}

func idemRecordTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("an idempotent create stores the entry and its record, which reads back with the entry as created", func(t *testing.T) {
		t.Parallel()
		repo, scope := newRepo(t), t.Name()
		e := cacheEntry(1)
		e.ExpiresAt = cacheAt(cacheT0.Add(time.Hour))
		e.Data = []byte(" {\"b\" : 1, \"a\":\"é\"} ")
		rec := idemRecord(scope, "k1", e)
		if err := repo.CreateIdempotent(t.Context(), e, cacheT0, domain.Quota{}, rec); err != nil {
			t.Fatalf("CreateIdempotent = %v", err)
		}
		cacheWantEntry(t, cacheGet(t, repo, e.ID, cacheT0), e)
		got, ok := idemLookup(t, repo, scope, "k1", cacheT0)
		if !ok {
			t.Fatal("no record after the create")
		}
		if got.Scope != scope || got.Key != "k1" || got.RequestHash != rec.RequestHash || !got.ExpiresAt.Equal(rec.ExpiresAt) {
			t.Errorf("record %+v, want %+v", got, rec)
		}
		cacheWantEntry(t, got.Entry, e)
		// The record keeps the first answer, whatever happens to the entry.
		if _, err := repo.Update(t.Context(), e.ID, cacheT0, domain.Quota{}, func(x *domain.Entry) error {
			x.Data = []byte(`2`)
			return nil
		}); err != nil {
			t.Fatalf("Update = %v", err)
		}
		got, _ = idemLookup(t, repo, scope, "k1", cacheT0)
		cacheWantEntry(t, got.Entry, e)
		if _, ok := idemLookup(t, repo, scope, "k2", cacheT0); ok {
			t.Error("a key never used has a record")
		}
		if _, ok := idemLookup(t, repo, scope+"/other", "k1", cacheT0); ok {
			t.Error("a key is visible in another scope")
		}
	})

	t.Run("a key used in its scope writes nothing again; in another scope it is free", func(t *testing.T) {
		t.Parallel()
		repo, scope := newRepo(t), t.Name()
		first, second, third := cacheEntry(1), cacheEntry(2), cacheEntry(3)
		if err := repo.CreateIdempotent(t.Context(), first, cacheT0, domain.Quota{}, idemRecord(scope, "k", first)); err != nil {
			t.Fatalf("first CreateIdempotent = %v", err)
		}
		err := repo.CreateIdempotent(t.Context(), second, cacheT0, domain.Quota{}, idemRecord(scope, "k", second))
		cacheWantErr(t, "CreateIdempotent with a used key", err, domain.ErrIdempotencyKeyInProgress)
		cacheWantGone(t, repo, second, cacheT0)
		got, _ := idemLookup(t, repo, scope, "k", cacheT0)
		cacheWantEntry(t, got.Entry, first)
		if err := repo.CreateIdempotent(t.Context(), third, cacheT0, domain.Quota{}, idemRecord(scope+"/other", "k", third)); err != nil {
			t.Fatalf("CreateIdempotent in another scope = %v", err)
		}
		cacheGet(t, repo, third.ID, cacheT0)
	})

	t.Run("a create that fails stores no record, so the key stays free", func(t *testing.T) {
		t.Parallel()
		repo, scope := newRepo(t), t.Name()
		held := cacheEntry(1)
		cacheCreate(t, repo, held, cacheT0)
		clash := cacheEntry(2)
		clash.Key = held.Key
		err := repo.CreateIdempotent(t.Context(), clash, cacheT0, domain.Quota{}, idemRecord(scope, "k", clash))
		cacheWantErr(t, "CreateIdempotent of a taken natural key", err, domain.ErrCacheEntityAlreadyExists)
		if _, ok := idemLookup(t, repo, scope, "k", cacheT0); ok {
			t.Fatal("a failed create left its record")
		}
		full := cacheEntry(3)
		full.AssigneeID = cacheAssignee(3)
		err = repo.CreateIdempotent(t.Context(), full, cacheT0, domain.Quota{MaxEntries: 1, MaxBytes: 1}, idemRecord(scope, "q", full))
		cacheWantErr(t, "CreateIdempotent past the quota", err, domain.ErrCacheQuotaExceeded)
		if _, ok := idemLookup(t, repo, scope, "q", cacheT0); ok {
			t.Fatal("a refused create left its record")
		}
		ok := cacheEntry(4)
		if err := repo.CreateIdempotent(t.Context(), ok, cacheT0, domain.Quota{}, idemRecord(scope, "k", ok)); err != nil {
			t.Fatalf("CreateIdempotent with the key a failure left free = %v", err)
		}
	})

	t.Run("a dead row in the way is cleared as by Create", func(t *testing.T) {
		t.Parallel()
		repo, scope := newRepo(t), t.Name()
		old := cacheEntry(1)
		old.ExpiresAt = cacheAt(cacheT0.Add(time.Minute))
		cacheCreate(t, repo, old, cacheT0)
		later := cacheT0.Add(time.Hour)
		next := cacheEntry(2)
		next.Key, next.DateCreated, next.DateUpdated = old.Key, later, later
		if err := repo.CreateIdempotent(t.Context(), next, later, domain.Quota{}, idemRecord(scope, "k", next)); err != nil {
			t.Fatalf("CreateIdempotent over an expired row = %v", err)
		}
		cacheGet(t, repo, next.ID, later)
	})

	t.Run("a record stops answering when it expires, is replaced then, and is purged", func(t *testing.T) {
		t.Parallel()
		repo, scope := newRepo(t), t.Name()
		e := cacheEntry(1)
		rec := idemRecord(scope, "k", e)
		if err := repo.CreateIdempotent(t.Context(), e, cacheT0, domain.Quota{}, rec); err != nil {
			t.Fatalf("CreateIdempotent = %v", err)
		}
		if _, ok := idemLookup(t, repo, scope, "k", rec.ExpiresAt.Add(-time.Microsecond)); !ok {
			t.Error("the record is gone before it expires")
		}
		if _, ok := idemLookup(t, repo, scope, "k", rec.ExpiresAt); ok {
			t.Error("the record answers at its expiry")
		}
		later := rec.ExpiresAt.Add(time.Hour)
		next := cacheEntry(2)
		rec2 := idemRecord(scope, "k", next)
		rec2.ExpiresAt = later.Add(24 * time.Hour)
		if err := repo.CreateIdempotent(t.Context(), next, later, domain.Quota{}, rec2); err != nil {
			t.Fatalf("CreateIdempotent with an expired key = %v", err)
		}
		got, _ := idemLookup(t, repo, scope, "k", later)
		cacheWantEntry(t, got.Entry, next)
		n, err := repo.PurgeIdempotency(t.Context(), rec2.ExpiresAt, 1000)
		if err != nil || n < 1 {
			t.Fatalf("PurgeIdempotency = %d, %v; want at least the one record", n, err)
		}
		if _, ok := idemLookup(t, repo, scope, "k", later); ok {
			t.Error("a purged record still answers")
		}
		if n, err := repo.PurgeIdempotency(t.Context(), rec2.ExpiresAt, 0); err != nil || n != 0 {
			t.Errorf("PurgeIdempotency with limit 0 = %d, %v", n, err)
		}
	})

	t.Run("a record counts in its assignee's bytes until it is purged", func(t *testing.T) {
		t.Parallel()
		repo, scope := newRepo(t), t.Name()
		e := cacheEntry(1)
		rec := idemRecord(scope, "k", e)
		cost := domain.RecordBytes(scope, "k", e)
		q := domain.Quota{MaxBytes: created(e) + cost - 1}
		cacheWantErr(t, "an idempotent create one byte past the quota, its record included",
			repo.CreateIdempotent(t.Context(), e, cacheT0, q, rec), domain.ErrCacheQuotaExceeded)
		if _, ok := idemLookup(t, repo, scope, "k", cacheT0); ok {
			t.Fatal("a refused create left its record")
		}
		q.MaxBytes++
		if err := repo.CreateIdempotent(t.Context(), e, cacheT0, q, rec); err != nil {
			t.Fatalf("an idempotent create reaching the quota exactly = %v", err)
		}
		// Room for one more create as large as the record, once it is gone.
		f := cacheEntry(2)
		f.Data = []byte(`1`)
		q.MaxBytes += created(f) - cost
		cacheWantErr(t, "a create while the record is kept", repo.Create(t.Context(), f, cacheT0, q), domain.ErrCacheQuotaExceeded)
		if n, err := repo.PurgeIdempotency(t.Context(), rec.ExpiresAt, 1000); err != nil || n < 1 {
			t.Fatalf("PurgeIdempotency = %d, %v; want the record", n, err)
		}
		quotaCreate(t, repo, f, rec.ExpiresAt, q)
	})

	t.Run("of concurrent creates with one key exactly one writes", func(t *testing.T) {
		t.Parallel()
		repo, scope := newRepo(t), t.Name()
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := cacheEntry(i + 1)
				errs[i] = repo.CreateIdempotent(context.Background(), e, cacheT0, domain.Quota{}, idemRecord(scope, "k", e))
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("creates %d and %d both wrote", winner+1, i+1)
			case err == nil:
				winner = i
			case !errors.Is(err, domain.ErrIdempotencyKeyInProgress):
				t.Errorf("create %d = %v, want nil or %v", i+1, err, domain.ErrIdempotencyKeyInProgress)
			}
		}
		if winner < 0 {
			t.Fatal("no create wrote")
		}
		got, ok := idemLookup(t, repo, scope, "k", cacheT0)
		if !ok || got.Entry.ID != cacheID(winner+1) {
			t.Errorf("record names %q, want the winner %s", got.Entry.ID, cacheID(winner+1))
		}
		for i := range n {
			if i != winner {
				cacheWantGone(t, repo, cacheEntry(i+1), cacheT0)
			}
		}
	})
}

// lostAnswer is a repository whose idempotent creates commit and then
// fail, as a create does whose connection dies between its commit and the
// answer (the 503 after a committed create of a failover).
type lostAnswer struct {
	ports.CacheRepository
	mu   sync.Mutex
	lose int
}

// For keeps the lost answers; the test bounds no caller.
func (r *lostAnswer) For(domain.Caller) ports.CacheRepository { return r }

func (r *lostAnswer) CreateIdempotent(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota, rec ports.IdempotencyRecord) error {
	err := r.CacheRepository.CreateIdempotent(ctx, e, now, q, rec)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && r.lose > 0 {
		r.lose--
		return fmt.Errorf("after the commit: %w", domain.ErrDatabaseUnavailable)
	}
	return err
}

func idemUseCaseTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("a retry after a committed create whose answer was lost answers the first answer, not a conflict", func(t *testing.T) {
		t.Parallel()
		repo := &lostAnswer{CacheRepository: newRepo(t), lose: 1}
		// The assignment's name makes the scope this subtest's own.
		name := fmt.Sprintf("lost%d", time.Now().UnixNano())
		stores, err := application.NewAssignments(application.Assignment{Name: name, Repo: repo, Policy: domain.PolicyOwner})
		if err != nil {
			t.Fatal(err)
		}
		clock := system.NewManualClock(cacheT0)
		uc, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: system.UUIDv7{}})
		if err != nil {
			t.Fatal(err)
		}
		owner := cacheAssignee(7)
		actor := domain.AsPrincipal(domain.Principal{ID: owner})
		in := func(data, hash string) application.CreateCacheInput {
			return application.CreateCacheInput{Assignment: name, Actor: actor,
				Cache:       application.CacheInput{Key: "k", Type: "t", AssigneeID: owner, Data: []byte(data)},
				Idempotency: &application.IdempotencyKey{Key: "retry-me", RequestHash: hash}}
		}
		_, err = uc.Create.Execute(t.Context(), in(`1`, "h1"))
		if domain.KindOf(err) != domain.KindUnavailable {
			t.Fatalf("first create = %v, want the lost answer (unavailable)", err)
		}
		clock.Advance(time.Minute)
		got, err := uc.Create.Execute(t.Context(), in(`1`, "h1"))
		if err != nil {
			t.Fatalf("retry = %v, want the first answer", err)
		}
		if got.Version != 1 || !got.DateCreated.Equal(cacheT0) || string(got.Data) != `1` {
			t.Errorf("retry answered %s, want the entry created at %v", cacheFormat(got), cacheT0)
		}
		stored, err := repo.Get(t.Context(), got.ID, clock.Now())
		if err != nil {
			t.Fatalf("the committed entry: %v", err)
		}
		cacheWantEntry(t, stored, got)
		_, err = uc.Create.Execute(t.Context(), in(`2`, "h2"))
		cacheWantErr(t, "the key with another body", err, domain.ErrIdempotencyKeyReused)
		// The same body without the key is a create like any other: the
		// natural key is taken.
		plain := in(`1`, "h1")
		plain.Idempotency = nil
		_, err = uc.Create.Execute(t.Context(), plain)
		cacheWantErr(t, "the same create without a key", err, domain.ErrCacheEntityAlreadyExists)
		// After the key's lifetime the record is gone: the retry is a new
		// create, and conflicts.
		clock.Advance(application.IdempotencyLifetime)
		_, err = uc.Create.Execute(t.Context(), in(`1`, "h1"))
		cacheWantErr(t, "a retry after the key's lifetime", err, domain.ErrCacheEntityAlreadyExists)
	})
}
