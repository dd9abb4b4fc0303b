package contract

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// ChangeStore is a change log and the repositories that record into it.
type ChangeStore struct {
	Log ports.ChangeLog
	// Repo returns the repository of entity "a" or "b".
	Repo func(entity string) ports.CacheRepository
	// Entity returns the name changes of "a" or "b" are logged under.
	Entity func(name string) string
}

// farFuture prunes every change whatever clock recorded it.
var farFuture = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// ChangeLog runs the contract of ports.ChangeLog together with the
// repositories that write it. open must return a store of its own, with an
// empty log, on every call.
func ChangeLog(t *testing.T, open func(t *testing.T) ChangeStore) {
	t.Helper()
	t.Run("every write records one change, in order, with the entry as it became", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		a := s.Repo("a")
		e1, e2 := cacheEntry(1), cacheEntry(2)
		e2.AssigneeID = e1.AssigneeID
		cacheCreate(t, a, e1, cacheT0)
		cacheCreate(t, a, e2, cacheT0)
		up, err := a.Update(ctx, e1.ID, cacheT0, domain.Quota{}, func(e *domain.Entry) error { e.Data = []byte(`"v2"`); return nil })
		if err != nil {
			t.Fatal(err)
		}
		later := cacheT0.Add(time.Second)
		del, err := a.Delete(ctx, e1.ID, later, func(domain.Entry) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if n, err := a.DeleteByAssignee(ctx, e1.AssigneeID, later); err != nil || n != 1 {
			t.Fatalf("DeleteByAssignee = %d, %v; want 1", n, err)
		}
		got := changesAll(t, s.Log)
		wantKinds(t, got, domain.ChangeCreated, domain.ChangeCreated, domain.ChangeUpdated, domain.ChangeDeleted, domain.ChangeDeleted)
		wantRevsIncreasing(t, got)
		for _, c := range got {
			if c.Entity != s.Entity("a") {
				t.Errorf("rev %d entity = %q, want %q", c.Rev, c.Entity, s.Entity("a"))
			}
		}
		cacheWantEntry(t, got[0].Entry, e1)
		cacheWantEntry(t, got[2].Entry, up)
		cacheWantEntry(t, got[3].Entry, del)
		if got[4].Entry.ID != e2.ID || got[4].Entry.DateDeleted == nil || !got[4].Entry.DateDeleted.Equal(later) {
			t.Errorf("clear recorded %s, want %s deleted at %v", cacheFormat(got[4].Entry), e2.ID, later)
		}
		head, err := s.Log.Head(ctx)
		if err != nil || head != got[4].Rev {
			t.Errorf("Head = %d, %v; want %d", head, err, got[4].Rev)
		}
	})

	t.Run("a failed write records nothing", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		a := s.Repo("a")
		e := cacheEntry(1)
		cacheCreate(t, a, e, cacheT0)
		dup := cacheEntry(2)
		dup.Key, dup.AssigneeID = e.Key, e.AssigneeID
		cacheWantErr(t, "duplicate create", a.Create(t.Context(), dup, cacheT0, domain.Quota{}), domain.ErrCacheEntityAlreadyExists)
		_, err := a.Update(t.Context(), e.ID, cacheT0, domain.Quota{}, func(*domain.Entry) error { return domain.ErrForbidden })
		cacheWantErr(t, "refused update", err, domain.ErrForbidden)
		wantKinds(t, changesAll(t, s.Log), domain.ChangeCreated)
	})

	t.Run("reclaiming an expired entry records expired, as it last was, deleted at its expiry", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		a := s.Repo("a")
		exp := cacheT0.Add(time.Minute)
		e := cacheEntry(1)
		e.ExpiresAt = &exp
		gone := cacheEntry(2)
		cacheCreate(t, a, e, cacheT0)
		cacheCreate(t, a, gone, cacheT0)
		if _, err := a.Delete(t.Context(), gone.ID, cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if n, err := a.Purge(t.Context(), exp.Add(time.Second), 10); err != nil || n != 2 {
			t.Fatalf("Purge = %d, %v; want 2", n, err)
		}
		got := changesAll(t, s.Log)
		// The soft-deleted row's purge records nothing more.
		wantKinds(t, got, domain.ChangeCreated, domain.ChangeCreated, domain.ChangeDeleted, domain.ChangeExpired)
		want := e
		want.DateDeleted = &exp
		cacheWantEntry(t, got[3].Entry, want)
	})

	t.Run("an expired entry in a new one's way is recorded expired before the new one's creation", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		a := s.Repo("a")
		exp := cacheT0.Add(time.Minute)
		old := cacheEntry(1)
		old.ExpiresAt = &exp
		cacheCreate(t, a, old, cacheT0)
		next := cacheEntry(2)
		next.Key, next.Type, next.AssigneeID = old.Key, old.Type, old.AssigneeID
		cacheCreate(t, a, next, exp.Add(time.Second))
		wantKinds(t, changesAll(t, s.Log), domain.ChangeCreated, domain.ChangeExpired, domain.ChangeCreated)
	})

	t.Run("resuming after any revision gives exactly the rest, across entities", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		for i := range 12 {
			name := []string{"a", "b"}[i%2]
			cacheCreate(t, s.Repo(name), cacheEntry(i), cacheT0)
		}
		all := changesAll(t, s.Log)
		if len(all) != 12 {
			t.Fatalf("%d changes, want 12", len(all))
		}
		wantRevsIncreasing(t, all)
		for i, c := range all {
			if want := s.Entity([]string{"a", "b"}[i%2]); c.Entity != want || c.Entry.ID != cacheID(i) {
				t.Errorf("change %d is %s of %q, want %s of %q", i, c.Entry.ID, c.Entity, cacheID(i), want)
			}
		}
		for k := range all {
			var got []domain.Change
			after := all[k].Rev
			for {
				page, err := s.Log.Changes(t.Context(), after, 5)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				got = append(got, page...)
				after = page[len(page)-1].Rev
			}
			if !slices.EqualFunc(got, all[k+1:], func(a, b domain.Change) bool { return a.Rev == b.Rev }) {
				t.Fatalf("after rev %d: revs %v, want %v", all[k].Rev, revs(got), revs(all[k+1:]))
			}
		}
	})

	t.Run("a log bound to a caller (For) reads the same changes", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		e1, e2 := cacheEntry(1), cacheEntry(2)
		cacheCreate(t, s.Repo("a").For(domain.Caller{User: "alice"}), e1, cacheT0)
		cacheCreate(t, s.Repo("a"), e2, cacheT0)
		all := changesAll(t, s.Log)
		alice := s.Log.For(domain.Caller{User: "alice"})
		if got := changesAll(t, alice); !slices.EqualFunc(got, all, sameChange) {
			t.Fatalf("bound log's changes %v, want %v", revs(got), revs(all))
		}
		head, err := alice.Head(ctx)
		if err != nil || head < all[len(all)-1].Rev {
			t.Fatalf("bound log's Head = %d, %v; want at least %d", head, err, all[len(all)-1].Rev)
		}
		if h, err := alice.Horizon(ctx); err != nil || h != 0 {
			t.Fatalf("bound log's Horizon = %d, %v; want 0", h, err)
		}
		q := ports.ChangeQuery{Entity: s.Entity("a"), AssigneeID: e2.AssigneeID, Key: e2.Key, Upto: head, Limit: 10}
		got, err := s.Log.For(domain.Caller{Address: "192.0.2.1"}).ChangesOf(ctx, q)
		if err != nil || len(got) != 1 || got[0].Entry.ID != e2.ID {
			t.Fatalf("bound log's ChangesOf = %v, %v; want the one change of %s", revs(got), err, e2.ID)
		}
	})
	t.Run("ChangesOf returns only one entity's matching changes, in order, within its bounds", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		// Three assignees in two entities, two keys and two types each.
		for i := range 24 {
			e := cacheEntry(i)
			e.AssigneeID = cacheAssignee(i % 3)
			e.Type = []string{"type", "other"}[i/3%2]
			cacheCreate(t, s.Repo([]string{"a", "b"}[i/6%2]), e, cacheT0)
		}
		all := changesAll(t, s.Log)
		if len(all) != 24 {
			t.Fatalf("%d changes, want 24", len(all))
		}
		head := all[len(all)-1].Rev
		for _, q := range []ports.ChangeQuery{
			{Entity: s.Entity("a")},
			{Entity: s.Entity("b"), AssigneeID: cacheAssignee(1)},
			{Entity: s.Entity("a"), AssigneeID: cacheAssignee(2), Type: "other"},
			{Entity: s.Entity("a"), AssigneeID: cacheAssignee(0), Key: "key-12"},
			{Entity: s.Entity("a"), Type: "type"},
			{Entity: s.Entity("b"), AssigneeID: "nobody"},
			{Entity: "no-such-entity", AssigneeID: cacheAssignee(0)},
		} {
			var want []domain.Change
			for _, c := range all {
				e := c.Entry
				if c.Entity == q.Entity && (q.AssigneeID == "" || e.AssigneeID == q.AssigneeID) &&
					(q.Key == "" || e.Key == q.Key) && (q.Type == "" || e.Type == q.Type) {
					want = append(want, c)
				}
			}
			// Every window (after, upto] read in pages of 2 gives exactly
			// the matching changes in it.
			for _, after := range []int64{0, all[4].Rev, all[11].Rev} {
				for _, upto := range []int64{all[15].Rev, head} {
					var got []domain.Change
					q := q
					q.After, q.Upto, q.Limit = after, upto, 2
					for {
						page, err := s.Log.ChangesOf(ctx, q)
						if err != nil {
							t.Fatalf("ChangesOf(%+v): %v", q, err)
						}
						if len(page) > q.Limit {
							t.Fatalf("ChangesOf(%+v) returned %d changes, above its limit", q, len(page))
						}
						if len(page) == 0 {
							break
						}
						got = append(got, page...)
						q.After = page[len(page)-1].Rev
					}
					var inWindow []domain.Change
					for _, c := range want {
						if c.Rev > after && c.Rev <= upto {
							inWindow = append(inWindow, c)
						}
					}
					if !slices.Equal(revs(got), revs(inWindow)) {
						t.Fatalf("ChangesOf(%+v) from %d up to %d: revs %v, want %v", q, after, upto, revs(got), revs(inWindow))
					}
					for i := range got {
						cacheWantEntry(t, got[i].Entry, inWindow[i].Entry)
						if got[i].Entity != q.Entity || got[i].Kind != inWindow[i].Kind {
							t.Fatalf("change %d is %s of %q", got[i].Rev, got[i].Kind, got[i].Entity)
						}
					}
				}
			}
		}
		if page, err := s.Log.ChangesOf(ctx, ports.ChangeQuery{Entity: s.Entity("a"), After: 0, Upto: head}); err != nil || len(page) != 0 {
			t.Fatalf("ChangesOf with no limit = %d changes, %v; want none", len(page), err)
		}
	})

	t.Run("pruning removes the oldest changes only and moves the horizon", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		for i := range 5 {
			cacheCreate(t, s.Repo("a"), cacheEntry(i), cacheT0)
		}
		all := changesAll(t, s.Log)
		if h, err := s.Log.Horizon(ctx); err != nil || h != 0 {
			t.Fatalf("Horizon before pruning = %d, %v; want 0", h, err)
		}
		if n, err := s.Log.Prune(ctx, time.Unix(0, 0), 10); err != nil || n != 0 {
			t.Fatalf("Prune before 1970 = %d, %v; want 0", n, err)
		}
		if n, err := s.Log.Prune(ctx, farFuture, 2); err != nil || n != 2 {
			t.Fatalf("Prune(limit 2) = %d, %v; want 2", n, err)
		}
		if h, err := s.Log.Horizon(ctx); err != nil || h != all[1].Rev {
			t.Fatalf("Horizon = %d, %v; want %d", h, err, all[1].Rev)
		}
		if got := changesAll(t, s.Log); !slices.Equal(revs(got), revs(all[2:])) {
			t.Fatalf("after pruning: %v, want %v", revs(got), revs(all[2:]))
		}
		if n, err := s.Log.Prune(ctx, farFuture, 100); err != nil || n != 3 {
			t.Fatalf("Prune(all) = %d, %v; want 3", n, err)
		}
		// An empty log keeps counting from where it was.
		cacheCreate(t, s.Repo("a"), cacheEntry(9), cacheT0)
		got := changesAll(t, s.Log)
		if len(got) != 1 || got[0].Rev <= all[4].Rev {
			t.Fatalf("after pruning everything, new change %v, want one above %d", revs(got), all[4].Rev)
		}
		if head, err := s.Log.Head(ctx); err != nil || head != got[0].Rev {
			t.Fatalf("Head = %d, %v; want %d", head, err, got[0].Rev)
		}
	})

	t.Run("a change counts in its assignee's bytes until it is pruned", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx, repo := t.Context(), s.Repo("a")
		e := cacheEntry(1)
		q := domain.Quota{MaxBytes: created(e)}
		quotaCreate(t, repo, e, cacheT0, q)
		// Deleted and removed, the entry is gone; its two changes (created,
		// deleted) stay until the log prunes them.
		if _, err := repo.Delete(ctx, e.ID, cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Purge(ctx, cacheT0, 100); err != nil {
			t.Fatal(err)
		}
		again := cacheEntry(2)
		cacheWantErr(t, "a create while the changes are kept", repo.Create(ctx, again, cacheT0, q), domain.ErrCacheQuotaExceeded)
		if n, err := s.Log.Prune(ctx, farFuture, 100); err != nil || n != 2 {
			t.Fatalf("Prune = %d, %v; want the 2 changes", n, err)
		}
		quotaCreate(t, repo, again, cacheT0, q)
		// An expiring entry logs a change again when it is removed.
		exp := cacheEntry(3)
		exp.ExpiresAt = cacheAt(cacheT0.Add(time.Second))
		if _, err := s.Log.Prune(ctx, farFuture, 100); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Delete(ctx, again.ID, cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Purge(ctx, cacheT0, 100); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Log.Prune(ctx, farFuture, 100); err != nil {
			t.Fatal(err)
		}
		big := domain.Quota{MaxBytes: created(exp) + domain.ChangeBytes(exp)}
		quotaCreate(t, repo, exp, cacheT0, big)
		later := cacheT0.Add(time.Hour)
		if n, err := repo.Purge(ctx, later, 100); err != nil || n != 1 {
			t.Fatalf("Purge of the expired entry = %d, %v", n, err)
		}
		small := cacheEntry(4)
		small.Data = []byte(`1`)
		cacheWantErr(t, "a create while the created and expired changes are kept", repo.Create(ctx, small, later, big), domain.ErrCacheQuotaExceeded)
	})

	t.Run("concurrent writers get distinct revisions and none is lost", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		var wg sync.WaitGroup
		const writers, each = 4, 15
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					e := cacheEntry(1000 + w*each + i)
					if err := s.Repo("a").Create(t.Context(), e, cacheT0, domain.Quota{}); err != nil {
						t.Errorf("Create: %v", err)
					}
				}
			})
		}
		wg.Wait()
		got := changesAll(t, s.Log)
		wantRevsIncreasing(t, got)
		if len(got) != writers*each {
			t.Fatalf("%d changes, want %d", len(got), writers*each)
		}
	})
}

// changesAll reads the whole log from the start, a page at a time.
func changesAll(t *testing.T, l ports.ChangeLog) []domain.Change {
	t.Helper()
	var out []domain.Change
	after := int64(0)
	for {
		page, err := l.Changes(t.Context(), after, 3)
		if err != nil {
			t.Fatalf("Changes: %v", err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Rev
	}
}

func wantKinds(t *testing.T, got []domain.Change, want ...domain.ChangeKind) {
	t.Helper()
	var g, w []string
	for _, c := range got {
		g = append(g, c.Kind.String())
	}
	for _, k := range want {
		w = append(w, k.String())
	}
	if !slices.Equal(g, w) {
		t.Fatalf("kinds %v, want %v", g, w)
	}
}

func wantRevsIncreasing(t *testing.T, got []domain.Change) {
	t.Helper()
	for i := 1; i < len(got); i++ {
		if got[i].Rev <= got[i-1].Rev {
			t.Fatalf("revisions not increasing: %v", revs(got))
		}
	}
}

func revs(cs []domain.Change) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.Rev
	}
	return out
}

// sameChange reports whether a and b are the same change of the log.
func sameChange(a, b domain.Change) bool {
	return a.Rev == b.Rev && a.Kind == b.Kind && a.Entity == b.Entity && a.Entry.ID == b.Entry.ID
}
