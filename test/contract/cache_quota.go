package contract

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// cacheQuotaTests pin the quota of CacheRepository.Create and Update
// (domain.Quota): what counts (entries until removed and their data's
// bytes, per assignee, and the change each write logs), what frees a place
// (deletion, clearing, expiry, swept or not, moving an entry away), that
// every write adding bytes is checked, that conflicts come before the
// quota, and that the check and the write are one atomic step. What the
// change log and idempotency records keep is pinned where they are
// (ChangeLog, CacheIdempotency).
func cacheQuotaTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	entries3 := domain.Quota{MaxEntries: 3}

	t.Run("a create past maxEntries is ErrCacheQuotaExceeded and leaves every entry as it was", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		var kept []domain.Entry
		for i := range 3 {
			e := cacheEntry(i)
			quotaCreate(t, repo, e, cacheT0, entries3)
			kept = append(kept, e)
		}
		err := repo.Create(t.Context(), cacheEntry(3), cacheT0, entries3)
		cacheWantErr(t, "the fourth create under maxEntries 3", err, domain.ErrCacheQuotaExceeded)
		var de *domain.Error
		if errors.As(err, &de) && (de.Kind != domain.KindForbidden || !strings.Contains(de.Message, "3 entries")) {
			t.Errorf("quota error = kind %v, %q; want forbidden, naming the limit of 3 entries", de.Kind, de.Message)
		}
		if _, err := repo.Get(t.Context(), cacheID(3), cacheT0); !errors.Is(err, domain.ErrCacheNotFound) {
			t.Errorf("Get of the refused entry = %v, want ErrCacheNotFound", err)
		}
		for _, e := range kept {
			cacheWantEntry(t, cacheGet(t, repo, e.ID, cacheT0), e)
		}
		other := cacheEntry(4)
		other.AssigneeID = cacheAssignee(1)
		quotaCreate(t, repo, other, cacheT0, entries3)
		quotaCreate(t, repo, cacheEntry(5), cacheT0, domain.Quota{})
	})

	t.Run("maxBytes counts the bytes of the data's JSON text, not its characters", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		a, b := cacheEntry(1), cacheEntry(2)
		a.Data = []byte(`"héllo"`) // 8 bytes, 7 characters
		b.Data = []byte(`"日本語"`)   // 11 bytes
		if created(a)-created(cacheEntry(1)) != int64(2*(8-len(cacheEntry(1).Data))) {
			t.Fatalf("a create of 8 bytes of data counts %d, want its data twice (the entry and its change)", created(a))
		}
		limit := created(a) + created(b)
		q := domain.Quota{MaxBytes: limit}
		quotaCreate(t, repo, a, cacheT0, q)
		quotaCreate(t, repo, b, cacheT0, q)
		c := cacheEntry(3)
		c.Data = []byte(`1`)
		err := repo.Create(t.Context(), c, cacheT0, q)
		cacheWantErr(t, "one byte past maxBytes", err, domain.ErrCacheQuotaExceeded)
		var de *domain.Error
		if errors.As(err, &de) && !strings.Contains(de.Message, fmt.Sprintf("%d bytes", limit)) {
			t.Errorf("quota error %q does not name the limit of %d bytes", de.Message, limit)
		}
		big := cacheEntry(4)
		big.AssigneeID = cacheAssignee(1)
		big.Data = []byte(`"` + strings.Repeat("x", 18) + `"`)
		tight := domain.Quota{MaxBytes: created(big) - 1, MaxEntries: 1}
		cacheWantErr(t, "an entry larger than maxBytes by itself", repo.Create(t.Context(), big, cacheT0, tight), domain.ErrCacheQuotaExceeded)
		tight.MaxBytes++
		quotaCreate(t, repo, big, cacheT0, tight)
	})

	t.Run("an update is refused when it would pass the quota, its change included, and then changes nothing", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		a, b := cacheEntry(1), cacheEntry(2)
		a.Data, b.Data = []byte(`"aaaa"`), []byte(`"bbbb"`) // 6 bytes each
		a14 := a
		a14.Data = []byte(`"` + strings.Repeat("a", 12) + `"`)
		_, grown := domain.Growth(&a, a14)
		q := domain.Quota{MaxBytes: created(a) + created(b) + grown}
		quotaCreate(t, repo, a, cacheT0, q)
		quotaCreate(t, repo, b, cacheT0, q)
		now := cacheT0.Add(time.Second)
		grow := func(data string) error {
			_, err := repo.Update(t.Context(), a.ID, now, q, func(e *domain.Entry) error {
				e.Data = []byte(data)
				return nil
			})
			return err
		}
		if err := grow(string(a14.Data)); err != nil {
			t.Fatalf("an update reaching exactly maxBytes = %v", err)
		}
		// The quota is used up: even an update that keeps the size logs a
		// change, which would pass it.
		cacheWantErr(t, "an update keeping the size at maxBytes", grow(`"`+strings.Repeat("b", 12)+`"`), domain.ErrCacheQuotaExceeded)
		got := cacheGet(t, repo, a.ID, now)
		if string(got.Data) != string(a14.Data) || got.Version != 2 {
			t.Errorf("after a refused update: data %s version %d, want the 14 bytes of version 2", got.Data, got.Version)
		}
		// An update that frees more than its change keeps passes a quota
		// lowered below what is stored; a delete always does.
		low := domain.Quota{MaxBytes: 9, MaxEntries: 1}
		if _, err := repo.Update(t.Context(), a.ID, now, low, func(e *domain.Entry) error {
			e.Data = []byte(`"b"`)
			return nil
		}); err == nil {
			t.Errorf("an update shrinking 14 bytes to 3 over a lowered quota passed; its change keeps more than it frees")
		}
		if _, err := repo.Delete(t.Context(), b.ID, now, func(domain.Entry) error { return nil }); err != nil {
			t.Errorf("a delete over a lowered quota = %v, want it done", err)
		}
	})

	t.Run("moving an entry to another assignee counts it there and frees its place here", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		q := domain.Quota{MaxEntries: 1}
		mine, theirs := cacheEntry(1), cacheEntry(2)
		theirs.AssigneeID = cacheAssignee(1)
		quotaCreate(t, repo, mine, cacheT0, q)
		quotaCreate(t, repo, theirs, cacheT0, q)
		move := func(id, to string) error {
			_, err := repo.Update(t.Context(), id, cacheT0, q, func(e *domain.Entry) error {
				e.AssigneeID = to
				return nil
			})
			return err
		}
		cacheWantErr(t, "moving an entry to an assignee at maxEntries", move(mine.ID, cacheAssignee(1)), domain.ErrCacheQuotaExceeded)
		if err := move(mine.ID, cacheAssignee(2)); err != nil {
			t.Fatalf("moving an entry to an assignee with room = %v", err)
		}
		quotaCreate(t, repo, cacheEntry(3), cacheT0, q)
		e := cacheEntry(4)
		e.AssigneeID = cacheAssignee(2)
		cacheWantErr(t, "a create for the assignee the entry moved to", repo.Create(t.Context(), e, cacheT0, q), domain.ErrCacheQuotaExceeded)
	})

	t.Run("deleted and cleared entries give their places back", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		for i := range 3 {
			quotaCreate(t, repo, cacheEntry(i), cacheT0, entries3)
		}
		if _, err := repo.Delete(t.Context(), cacheID(0), cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatal(err)
		}
		quotaCreate(t, repo, cacheEntry(3), cacheT0, entries3)
		cacheWantErr(t, "a create at maxEntries again", repo.Create(t.Context(), cacheEntry(4), cacheT0, entries3), domain.ErrCacheQuotaExceeded)
		if n, err := repo.DeleteByAssignee(t.Context(), cacheAssignee(0), cacheT0); err != nil || n != 3 {
			t.Fatalf("DeleteByAssignee = %d, %v; want 3", n, err)
		}
		// The row deleted first was removed by the create that needed its
		// place.
		if n, err := repo.Purge(t.Context(), cacheT0, 100); err != nil || n != 3 {
			t.Fatalf("Purge = %d, %v; want the 3 deleted rows left", n, err)
		}
		for i := 5; i < 8; i++ {
			quotaCreate(t, repo, cacheEntry(i), cacheT0, entries3)
		}
		cacheWantErr(t, "a create at maxEntries after the clear", repo.Create(t.Context(), cacheEntry(8), cacheT0, entries3), domain.ErrCacheQuotaExceeded)
	})

	t.Run("an expired entry takes no place, swept or not", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		q := domain.Quota{MaxEntries: 3}
		expires := cacheT0.Add(time.Minute)
		for i := range 3 {
			e := cacheEntry(i)
			if i < 2 {
				e.ExpiresAt = &expires
			}
			quotaCreate(t, repo, e, cacheT0, q)
		}
		before := expires.Add(-time.Microsecond)
		cacheWantErr(t, "a create a microsecond before two entries expire", repo.Create(t.Context(), cacheEntry(3), before, q),
			domain.ErrCacheQuotaExceeded)
		// Not swept: the two expired rows are still stored.
		quotaCreate(t, repo, cacheEntry(3), expires, q)
		quotaCreate(t, repo, cacheEntry(4), expires, q)
		cacheWantErr(t, "a create with the three live places taken", repo.Create(t.Context(), cacheEntry(5), expires, q),
			domain.ErrCacheQuotaExceeded)
		for _, id := range []string{cacheID(2), cacheID(3), cacheID(4)} {
			cacheGet(t, repo, id, expires)
		}
		// Swept: the counts stay right after Purge removes rows.
		later := expires.Add(time.Hour)
		e := cacheEntry(6)
		e.ExpiresAt = cacheAt(later.Add(-time.Second))
		if _, err := repo.Update(t.Context(), cacheID(4), expires, q, func(x *domain.Entry) error {
			x.ExpiresAt = e.ExpiresAt
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Purge(t.Context(), later, 100); err != nil {
			t.Fatal(err)
		}
		quotaCreate(t, repo, cacheEntry(7), later, q)
		cacheWantErr(t, "a create with the live places taken after a sweep", repo.Create(t.Context(), cacheEntry(8), later, q),
			domain.ErrCacheQuotaExceeded)
	})

	t.Run("a conflict is reported before the quota", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		q := domain.Quota{MaxEntries: 1}
		quotaCreate(t, repo, cacheEntry(1), cacheT0, q)
		dup := cacheEntry(2)
		dup.Key = cacheEntry(1).Key
		cacheWantErr(t, "a create of a taken natural key at maxEntries", repo.Create(t.Context(), dup, cacheT0, q),
			domain.ErrCacheEntityAlreadyExists)
		cacheWantErr(t, "a create of a taken id at maxEntries", repo.Create(t.Context(), cacheEntry(1), cacheT0, q),
			domain.ErrCacheIDTaken)
	})

	t.Run("of concurrent creates competing for the last place exactly one succeeds", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		const limit = 5
		q := domain.Quota{MaxEntries: limit}
		for i := range limit - 1 {
			quotaCreate(t, repo, cacheEntry(i), cacheT0, q)
		}
		for round := range 2 {
			var wg sync.WaitGroup
			errs := make([]error, cacheConcurrency)
			for i := range cacheConcurrency {
				wg.Go(func() { errs[i] = repo.Create(t.Context(), cacheEntry(100*(round+1)+i), cacheT0, q) })
			}
			wg.Wait()
			won := quotaWinners(t, errs)
			res, err := ListAll(t.Context(), repo, ports.ListQuery{Owner: cacheAssignee(0), Limit: 100, CountTotal: true}, cacheT0)
			if err != nil || res.Total != limit {
				t.Errorf("round %d: the assignee holds %d entries (%v), want %d", round, res.Total, err, limit)
			}
			// Free one place for the next round.
			if _, err := repo.Delete(t.Context(), cacheID(100*(round+1)+won), cacheT0, func(domain.Entry) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("of concurrent updates competing for the last bytes exactly one succeeds", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		var q domain.Quota
		for i := range cacheConcurrency {
			e := cacheEntry(i)
			e.Data = []byte(`"x"`)
			next := e
			next.Data = []byte(`"xy"`)
			_, grown := domain.Growth(&e, next)
			q.MaxBytes = created(e)*int64(i+1) + grown
			quotaCreate(t, repo, e, cacheT0, q)
		}
		var wg sync.WaitGroup
		errs := make([]error, cacheConcurrency)
		for i := range cacheConcurrency {
			wg.Go(func() {
				_, errs[i] = repo.Update(t.Context(), cacheID(i), cacheT0, q, func(e *domain.Entry) error {
					e.Data = []byte(`"xy"`)
					return nil
				})
			})
		}
		wg.Wait()
		quotaWinners(t, errs)
	})
}

// created is what creating e counts in its assignee's bytes: its data and
// its change.
func created(e domain.Entry) int64 {
	_, b := domain.Growth(nil, e)
	return b
}

// quotaCreate creates e under q and fails t if that fails.
func quotaCreate(t *testing.T, r ports.CacheRepository, e domain.Entry, now time.Time, q domain.Quota) {
	t.Helper()
	if err := r.Create(t.Context(), e, now, q); err != nil {
		t.Fatalf("Create(%s) under %+v = %v", e.ID, q, err)
	}
}

// quotaWinners fails t unless exactly one of errs is nil and the others
// are ErrCacheQuotaExceeded; it returns the winner's index.
func quotaWinners(t *testing.T, errs []error) int {
	t.Helper()
	winner := -1
	var won []string
	for i, err := range errs {
		switch {
		case err == nil:
			winner = i
			won = append(won, fmt.Sprint(i))
		case !errors.Is(err, domain.ErrCacheQuotaExceeded):
			t.Errorf("write %d = %v, want nil or ErrCacheQuotaExceeded", i, err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("writes %v succeeded, want exactly one", won)
	}
	return winner
}
