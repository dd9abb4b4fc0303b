package contract

import (
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// CacheRepository runs the contract of ports.CacheRepository. newRepo must
// return an empty repository of its own on every call; subtests run in
// parallel. The suite pins every error contract of the port, round trips
// field for field, visibility from the instant of expiry or deletion,
// lists, purges, quotas and behaviour under concurrent writers.
func CacheRepository(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Helper()
	cacheReadTests(t, newRepo)
	cacheConflictTests(t, newRepo)
	cacheUpdateTests(t, newRepo)
	cacheDeleteTests(t, newRepo)
	cacheListTests(t, newRepo)
	CacheQuery(t, newRepo)
	cachePurgeTests(t, newRepo)
	cacheQuotaTests(t, newRepo)
	CacheIdempotency(t, newRepo)
}

func cacheReadTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("a repository bound to a caller (For) holds the same entries", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		alice := repo.For(domain.Caller{User: "alice"})
		cacheCreate(t, alice, cacheEntry(1), cacheT0)
		cacheCreate(t, repo, cacheEntry(2), cacheT0)
		cacheWantEntry(t, cacheGet(t, repo, cacheEntry(1).ID, cacheT0), cacheEntry(1))
		cacheWantEntry(t, cacheGet(t, alice, cacheEntry(2).ID, cacheT0), cacheEntry(2))
		cacheWantEntry(t, cacheGet(t, repo.For(domain.Caller{Address: "192.0.2.1"}), cacheEntry(1).ID, cacheT0), cacheEntry(1))
	})
	t.Run("a created entry reads back by id and by natural key with every field equal", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		datas := []string{
			`"plain"`,
			" \t{ \"b\" : 1,  \"a\" : [1, 2.50, 3e2, -0.0] }\n ",
			`"héllo wörld ✓ 😀 日本語 \u00e9 \ud83d\ude00"`,
			`{"q":"it's a \"quote\", a \\ backslash, a ? and a $1"}`,
			`null`,
			`12.500`,
			`[]`,
			`{"z":{"y":1,"a":2},"a":null}`,
			`"` + strings.Repeat("0123456789abcdef", 12<<10) + `"`,
		}
		var want []domain.Entry
		for i, data := range datas {
			e := cacheEntry(i)
			e.Data = []byte(data)
			e.Version = i + 1
			e.DateUpdated = cacheT0.Add(time.Duration(i) * time.Microsecond)
			if i%2 == 1 {
				e.ExpiresAt = cacheAt(cacheT0.Add(time.Hour + time.Duration(i)*time.Microsecond))
			}
			cacheCreate(t, repo, e, cacheT0)
			want = append(want, e)
		}
		for _, e := range want {
			cacheWantEntry(t, cacheGet(t, repo, e.ID, cacheT0), e)
			got, err := repo.GetByKey(t.Context(), e.NaturalKey(), cacheT0)
			if err != nil {
				t.Fatalf("GetByKey(%v) = %v", e.NaturalKey(), err)
			}
			cacheWantEntry(t, got, e)
		}
	})

	t.Run("times come back in UTC, truncated to the microsecond", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		zone := time.FixedZone("UTC+5:30", 5*3600+1800)
		e := cacheEntry(1)
		e.DateCreated = time.Date(2031, 5, 6, 7, 8, 9, 123456789, zone)
		e.DateUpdated = time.Date(1999, 12, 31, 23, 59, 59, 999999999, zone)
		e.ExpiresAt = cacheAt(time.Date(2101, 1, 1, 0, 0, 0, 1999, zone))
		cacheCreate(t, repo, e, cacheT0)
		want := e
		want.DateCreated = time.Date(2031, 5, 6, 1, 38, 9, 123456000, time.UTC)
		want.DateUpdated = time.Date(1999, 12, 31, 18, 29, 59, 999999000, time.UTC)
		want.ExpiresAt = cacheAt(time.Date(2100, 12, 31, 18, 30, 0, 1000, time.UTC))
		cacheWantEntry(t, cacheGet(t, repo, e.ID, cacheT0), want)
	})

	t.Run("an entry is invisible to every read from the instant it expires", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		e := cacheEntry(1)
		exp := cacheT0.Add(10 * time.Second)
		e.ExpiresAt = &exp
		cacheCreate(t, repo, e, cacheT0)
		before := exp.Add(-time.Microsecond)
		cacheGet(t, repo, e.ID, before)
		if _, err := repo.GetByKey(t.Context(), e.NaturalKey(), before); err != nil {
			t.Errorf("GetByKey a microsecond before expiry = %v", err)
		}
		res, err := ListAll(t.Context(), repo, ports.ListQuery{Limit: 10, CountTotal: true}, before)
		if err != nil || res.Total != 1 || len(res.Entries) != 1 {
			t.Errorf("List a microsecond before expiry = %d entries, total %d, %v; want 1, 1", len(res.Entries), res.Total, err)
		}
		for _, now := range []time.Time{exp, exp.Add(time.Nanosecond), exp.Add(time.Hour)} {
			cacheWantGone(t, repo, e, now)
			res, err := ListAll(t.Context(), repo, ports.ListQuery{Limit: 10, CountTotal: true}, now)
			if err != nil || res.Total != 0 || len(res.Entries) != 0 {
				t.Errorf("List at %v = %d entries, total %d, %v; want none", now, len(res.Entries), res.Total, err)
			}
		}
	})
}

func cacheConflictTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("a live entry's natural key is ErrCacheEntityAlreadyExists, and any other key, type or assignee is not", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		first := cacheEntry(1)
		cacheCreate(t, repo, first, cacheT0)
		dup := cacheEntry(2)
		dup.Key = first.Key
		cacheWantErr(t, "Create with a taken natural key", repo.Create(t.Context(), dup, cacheT0, domain.Quota{}), domain.ErrCacheEntityAlreadyExists)
		cacheWantEntry(t, cacheGet(t, repo, first.ID, cacheT0), first)

		for i, change := range []func(*domain.Entry){
			func(e *domain.Entry) { e.Key += "x" },
			func(e *domain.Entry) { e.Key = strings.ToUpper(e.Key) },
			func(e *domain.Entry) { e.Type = "other" },
			func(e *domain.Entry) { e.AssigneeID = cacheAssignee(9) },
		} {
			e := dup
			e.ID = cacheID(10 + i)
			change(&e)
			cacheCreate(t, repo, e, cacheT0)
		}
	})

	t.Run("a live entry's id is ErrCacheIDTaken", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		first := cacheEntry(1)
		cacheCreate(t, repo, first, cacheT0)
		again := cacheEntry(2)
		again.ID = first.ID
		cacheWantErr(t, "Create with a taken id", repo.Create(t.Context(), again, cacheT0, domain.Quota{}), domain.ErrCacheIDTaken)
		cacheWantEntry(t, cacheGet(t, repo, first.ID, cacheT0), first)
		if _, err := repo.GetByKey(t.Context(), again.NaturalKey(), cacheT0); err == nil {
			t.Errorf("the refused entry's natural key was stored")
		}
	})

	t.Run("when both the id and the natural key are taken, the id wins", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		first := cacheEntry(1)
		cacheCreate(t, repo, first, cacheT0)
		cacheWantErr(t, "Create of the very same entry again", repo.Create(t.Context(), first, cacheT0, domain.Quota{}), domain.ErrCacheIDTaken)
	})

	t.Run("an expired entry holds its natural key and id until it expires and frees them from then on", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		old := cacheEntry(1)
		exp := cacheT0.Add(time.Second)
		old.ExpiresAt = &exp
		cacheCreate(t, repo, old, cacheT0)
		sameKey := cacheEntry(2)
		sameKey.Key = old.Key
		sameID := cacheEntry(3)
		sameID.ID = old.ID
		before := exp.Add(-time.Microsecond)
		cacheWantErr(t, "Create with the natural key before expiry", repo.Create(t.Context(), sameKey, before, domain.Quota{}), domain.ErrCacheEntityAlreadyExists)
		cacheWantErr(t, "Create with the id before expiry", repo.Create(t.Context(), sameID, before, domain.Quota{}), domain.ErrCacheIDTaken)

		cacheCreate(t, repo, sameKey, exp)
		cacheCreate(t, repo, sameID, exp)
		cacheWantEntry(t, cacheGet(t, repo, old.ID, exp), sameID)
		got, err := repo.GetByKey(t.Context(), old.NaturalKey(), exp)
		if err != nil {
			t.Fatalf("GetByKey = %v", err)
		}
		cacheWantEntry(t, got, sameKey)
		// The old entry must not come back for a reader whose clock is behind.
		if got, err := repo.Get(t.Context(), old.ID, before); err == nil && got.Key == old.Key {
			t.Errorf("the expired entry is readable again at %v", before)
		}
	})

	t.Run("a deleted entry is invisible from the instant of deletion and frees its natural key and id", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		old := cacheEntry(1)
		cacheCreate(t, repo, old, cacheT0)
		at := cacheT0.Add(time.Minute)
		if _, err := repo.Delete(t.Context(), old.ID, at, func(domain.Entry) error { return nil }); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		cacheWantGone(t, repo, old, at)
		sameKey := cacheEntry(2)
		sameKey.Key = old.Key
		cacheCreate(t, repo, sameKey, at)
		sameID := cacheEntry(3)
		sameID.ID = old.ID
		cacheCreate(t, repo, sameID, at)
		cacheWantEntry(t, cacheGet(t, repo, old.ID, at), sameID)
		got, err := repo.GetByKey(t.Context(), old.NaturalKey(), at)
		if err != nil {
			t.Fatalf("GetByKey = %v", err)
		}
		cacheWantEntry(t, got, sameKey)
	})
}
