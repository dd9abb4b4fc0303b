package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// cacheConcurrency is how many goroutines the concurrency tests run.
const cacheConcurrency = 20

func cacheUpdateTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("update stores fn's changes with the version one higher and keeps the id", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		e := cacheEntry(1)
		cacheCreate(t, repo, e, cacheT0)
		now := cacheT0.Add(time.Minute)
		got, err := repo.Update(t.Context(), e.ID, now, domain.Quota{}, func(x *domain.Entry) error {
			x.ID = cacheID(99)
			x.Key, x.Type, x.AssigneeID = "new-key", "new-type", cacheAssignee(5)
			x.Data = []byte(` [ "changed" ] `)
			x.DateUpdated = now
			x.ExpiresAt = cacheAt(now.Add(time.Hour))
			return nil
		})
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		want := e
		want.Key, want.Type, want.AssigneeID = "new-key", "new-type", cacheAssignee(5)
		want.Data = []byte(` [ "changed" ] `)
		want.Version = 2
		want.DateUpdated = now
		want.ExpiresAt = cacheAt(now.Add(time.Hour))
		cacheWantEntry(t, got, want)
		cacheWantEntry(t, cacheGet(t, repo, e.ID, now), want)
		if _, err := repo.GetByKey(t.Context(), e.NaturalKey(), now); !errors.Is(err, domain.ErrCacheNotFound) {
			t.Errorf("the old natural key still finds the entry: %v", err)
		}
		if _, err := repo.Get(t.Context(), cacheID(99), now); !errors.Is(err, domain.ErrCacheNotFound) {
			t.Errorf("fn changed the id: %v", err)
		}
	})

	t.Run("update returns fn's error as is and changes nothing", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		e := cacheEntry(1)
		cacheCreate(t, repo, e, cacheT0)
		refuse := errors.New("refused by fn")
		_, err := repo.Update(t.Context(), e.ID, cacheT0, domain.Quota{}, func(x *domain.Entry) error {
			x.Data = []byte(`"changed"`)
			return refuse
		})
		if err != refuse { //nolint:errorlint // "as is" means unwrapped
			t.Errorf("Update = %v, want fn's error itself", err)
		}
		cacheWantEntry(t, cacheGet(t, repo, e.ID, cacheT0), e)
	})

	t.Run("update of a missing, deleted or expired entry is ErrCacheNotFound and does not call fn", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		deleted, expired := cacheEntry(1), cacheEntry(2)
		expired.ExpiresAt = cacheAt(cacheT0.Add(time.Second))
		cacheCreate(t, repo, deleted, cacheT0)
		cacheCreate(t, repo, expired, cacheT0)
		if _, err := repo.Delete(t.Context(), deleted.ID, cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		now := cacheT0.Add(time.Second)
		for _, id := range []string{cacheID(3), deleted.ID, expired.ID, "not a uuid"} {
			_, err := repo.Update(t.Context(), id, now, domain.Quota{}, func(*domain.Entry) error {
				t.Errorf("fn called for %s", id)
				return nil
			})
			cacheWantErr(t, "Update("+id+")", err, domain.ErrCacheNotFound)
		}
	})

	t.Run("update onto a live entry's natural key is ErrCacheEntityAlreadyExists, onto a dead one's it succeeds", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		live, moving, expired, deleted := cacheEntry(1), cacheEntry(2), cacheEntry(3), cacheEntry(4)
		expired.ExpiresAt = cacheAt(cacheT0.Add(time.Second))
		for _, e := range []domain.Entry{live, moving, expired, deleted} {
			cacheCreate(t, repo, e, cacheT0)
		}
		if _, err := repo.Delete(t.Context(), deleted.ID, cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		now := cacheT0.Add(time.Second)
		_, err := repo.Update(t.Context(), moving.ID, now, domain.Quota{}, func(x *domain.Entry) error { x.Key = live.Key; return nil })
		cacheWantErr(t, "Update onto a live natural key", err, domain.ErrCacheEntityAlreadyExists)
		cacheWantEntry(t, cacheGet(t, repo, moving.ID, now), moving)

		for _, dead := range []domain.Entry{expired, deleted} {
			got, err := repo.Update(t.Context(), moving.ID, now, domain.Quota{}, func(x *domain.Entry) error { x.Key = dead.Key; return nil })
			if err != nil {
				t.Fatalf("Update onto the natural key of dead %s = %v", dead.ID, err)
			}
			byKey, err := repo.GetByKey(t.Context(), dead.NaturalKey(), now)
			if err != nil {
				t.Fatalf("GetByKey = %v", err)
			}
			cacheWantEntry(t, byKey, got)
		}
	})

	t.Run("concurrent updates lose no update", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		e := cacheEntry(1)
		e.Data = []byte(`{"n":0}`)
		cacheCreate(t, repo, e, cacheT0)
		var wg sync.WaitGroup
		errs := make(chan error, cacheConcurrency)
		for range cacheConcurrency {
			wg.Go(func() {
				_, err := repo.Update(t.Context(), e.ID, cacheT0, domain.Quota{}, func(x *domain.Entry) error {
					var v struct{ N int }
					if err := json.Unmarshal(x.Data, &v); err != nil {
						return err
					}
					x.Data = fmt.Appendf(nil, `{"n":%d}`, v.N+1)
					return nil
				})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Update = %v", err)
			}
		}
		got := cacheGet(t, repo, e.ID, cacheT0)
		if want := fmt.Sprintf(`{"n":%d}`, cacheConcurrency); string(got.Data) != want || got.Version != cacheConcurrency+1 {
			t.Errorf("after %d concurrent increments: data %s version %d, want %s version %d",
				cacheConcurrency, got.Data, got.Version, want, cacheConcurrency+1)
		}
	})

	for _, over := range []string{"nothing", "an expired entry"} {
		t.Run("concurrent creates of one natural key over "+over+" let exactly one win", func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			now := cacheT0
			if over != "nothing" {
				old := cacheEntry(0)
				old.ExpiresAt = cacheAt(cacheT0.Add(time.Second))
				cacheCreate(t, repo, old, cacheT0)
				now = *old.ExpiresAt
			}
			var wg sync.WaitGroup
			errs := make([]error, cacheConcurrency)
			for i := range cacheConcurrency {
				wg.Go(func() {
					e := cacheEntry(100 + i)
					e.Key = cacheEntry(0).Key
					errs[i] = repo.Create(t.Context(), e, now, domain.Quota{})
				})
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Errorf("creates %d and %d both succeeded", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, domain.ErrCacheEntityAlreadyExists):
					t.Errorf("create %d = %v, want nil or ErrCacheEntityAlreadyExists", i, err)
				}
			}
			if winner < 0 {
				t.Fatalf("no create succeeded")
			}
			got, err := repo.GetByKey(t.Context(), cacheEntry(0).NaturalKey(), now)
			if err != nil || got.ID != cacheID(100+winner) {
				t.Errorf("GetByKey = %s, %v; want the winner %s", got.ID, err, cacheID(100+winner))
			}
		})
	}
}

func cacheDeleteTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("delete shows fn the entry and returns it marked deleted at now, version unchanged", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		e := cacheEntry(1)
		e.ExpiresAt = cacheAt(cacheT0.Add(time.Hour))
		cacheCreate(t, repo, e, cacheT0)
		now := cacheT0.Add(time.Minute + time.Nanosecond)
		got, err := repo.Delete(t.Context(), e.ID, now, func(seen domain.Entry) error {
			cacheWantEntry(t, seen, e)
			return nil
		})
		if err != nil {
			t.Fatalf("Delete = %v", err)
		}
		want := e
		want.DateDeleted = cacheAt(domain.Normalize(now))
		cacheWantEntry(t, got, want)
		_, err = repo.Delete(t.Context(), e.ID, now, func(domain.Entry) error { return nil })
		cacheWantErr(t, "a second Delete", err, domain.ErrCacheNotFound)
	})

	t.Run("delete refused by fn returns its error as is and keeps the entry", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		e := cacheEntry(1)
		cacheCreate(t, repo, e, cacheT0)
		refuse := errors.New("refused by fn")
		_, err := repo.Delete(t.Context(), e.ID, cacheT0, func(domain.Entry) error { return refuse })
		if err != refuse { //nolint:errorlint // "as is" means unwrapped
			t.Errorf("Delete = %v, want fn's error itself", err)
		}
		cacheWantEntry(t, cacheGet(t, repo, e.ID, cacheT0), e)
	})

	t.Run("delete of a missing or expired entry is ErrCacheNotFound and does not call fn", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		expired := cacheEntry(1)
		expired.ExpiresAt = cacheAt(cacheT0)
		cacheCreate(t, repo, expired, cacheT0.Add(-time.Second))
		for _, id := range []string{cacheID(2), expired.ID, ""} {
			_, err := repo.Delete(t.Context(), id, cacheT0, func(domain.Entry) error {
				t.Errorf("fn called for %q", id)
				return nil
			})
			cacheWantErr(t, "Delete("+id+")", err, domain.ErrCacheNotFound)
		}
	})

	t.Run("delete by assignee counts and hides only that assignee's live entries", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		now := cacheT0.Add(time.Minute)
		var mine, theirs []domain.Entry
		for i := range 7 {
			e := cacheEntry(i)
			switch i {
			case 3: // expired before now: not live, not counted
				e.ExpiresAt = cacheAt(now)
			case 4: // already deleted: not counted again
			case 5, 6:
				e.AssigneeID = cacheAssignee(1)
			}
			cacheCreate(t, repo, e, cacheT0)
			if e.AssigneeID == cacheAssignee(1) {
				theirs = append(theirs, e)
			} else {
				mine = append(mine, e)
			}
		}
		if _, err := repo.Delete(t.Context(), cacheID(4), cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		n, err := repo.DeleteByAssignee(t.Context(), cacheAssignee(0), now)
		if err != nil || n != 3 {
			t.Errorf("DeleteByAssignee = %d, %v; want 3", n, err)
		}
		for _, e := range mine {
			cacheWantGone(t, repo, e, now)
		}
		for _, e := range theirs {
			cacheWantEntry(t, cacheGet(t, repo, e.ID, now), e)
		}
		if n, err := repo.DeleteByAssignee(t.Context(), cacheAssignee(0), now); err != nil || n != 0 {
			t.Errorf("a second DeleteByAssignee = %d, %v; want 0", n, err)
		}
	})
}
