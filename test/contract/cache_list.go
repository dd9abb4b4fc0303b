package contract

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// cacheListSeed returns entries that differ and tie in every sortable
// field. Keys mix cases, punctuation and non-ASCII so that a locale
// collation would order them differently from bytes.
func cacheListSeed() []domain.Entry {
	rows := []struct {
		key, typ string
		assignee int
		created  time.Duration
		updated  time.Duration
	}{
		{"B", "t2", 0, 3, 1},
		{"a", "t1", 0, 1, 5},
		{"_x", "t2", 1, 1, 1},
		{"é", "T1", 1, 2, 0},
		{"a", "t2", 0, 2, 5},
		{"Z", "t1", 2, 0, 4},
		{"a", "t1", 1, 1, 2},
		{"b", "t1", 0, 3, 3},
	}
	var seed []domain.Entry
	// Ids are assigned against insertion order so that id order is not
	// insertion order.
	for i, r := range rows {
		e := cacheEntry(len(rows) - i)
		e.Key, e.Type, e.AssigneeID = r.key, r.typ, cacheAssignee(r.assignee)
		e.DateCreated = cacheT0.Add(r.created * time.Second)
		e.DateUpdated = cacheT0.Add(r.updated * time.Microsecond)
		seed = append(seed, e)
	}
	return seed
}

// cacheSorted returns the ids of entries sorted by one field, ties by id
// ascending whatever the direction, strings compared byte by byte.
func cacheSorted(entries []domain.Entry, field domain.QueryField, desc bool) []string {
	s := slices.Clone(entries)
	slices.SortFunc(s, func(a, b domain.Entry) int {
		var c int
		switch field {
		case domain.FieldDateCreated:
			c = a.DateCreated.Compare(b.DateCreated)
		case domain.FieldDateUpdated:
			c = a.DateUpdated.Compare(b.DateUpdated)
		case domain.FieldKey:
			c = strings.Compare(a.Key, b.Key)
		case domain.FieldType:
			c = strings.Compare(a.Type, b.Type)
		}
		if desc {
			c = -c
		}
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		return c
	})
	return cacheIDs(s)
}

// cacheEq is the filter field = v.
func cacheEq(t *testing.T, field domain.QueryField, v string) domain.Filter {
	t.Helper()
	c, err := domain.NewCondition("test", field, domain.OpEq, false, []string{v})
	if err != nil {
		t.Fatal(err)
	}
	return domain.Where(c)
}

func cacheList(t *testing.T, r ports.CacheRepository, q ports.ListQuery, now time.Time) Listed {
	t.Helper()
	res, err := ListAll(t.Context(), r, q, now)
	if err != nil {
		t.Fatalf("List(%+v) = %v", q, err)
	}
	return res
}

func cacheListTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("list filters by key, type and assignee, each alone or together", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		seed := cacheListSeed()
		for _, e := range seed {
			cacheCreate(t, repo, e, cacheT0)
		}
		type exact struct{ key, typ, assignee string }
		for _, x := range []exact{
			{},
			{key: "a"},
			{typ: "t1"},
			{typ: "T1"},
			{assignee: cacheAssignee(1)},
			{key: "a", typ: "t1"},
			{key: "a", typ: "t1", assignee: cacheAssignee(0)},
			{key: "A"},
			{assignee: cacheAssignee(7)},
		} {
			var match []domain.Entry
			for _, e := range seed {
				if (x.key == "" || e.Key == x.key) && (x.typ == "" || e.Type == x.typ) &&
					(x.assignee == "" || e.AssigneeID == x.assignee) {
					match = append(match, e)
				}
			}
			var all []domain.Filter
			for _, f := range []struct {
				field domain.QueryField
				v     string
			}{{domain.FieldKey, x.key}, {domain.FieldType, x.typ}, {domain.FieldAssigneeID, x.assignee}} {
				if f.v != "" {
					all = append(all, cacheEq(t, f.field, f.v))
				}
			}
			q := ports.ListQuery{Filter: domain.AllOf(all...), Limit: 100, CountTotal: true}
			res := cacheList(t, repo, q, cacheT0)
			cacheWantIDs(t, "List(key "+x.key+", type "+x.typ+", assignee "+x.assignee+")", res.Entries, cacheSorted(match, domain.FieldDateCreated, false))
			if res.Total != len(match) {
				t.Errorf("List(%+v) total = %d, want %d", x, res.Total, len(match))
			}
		}
		res := cacheList(t, repo, ports.ListQuery{Filter: cacheEq(t, domain.FieldKey, "a"), Limit: 10}, cacheT0)
		for _, got := range res.Entries {
			for _, want := range seed {
				if want.ID == got.ID {
					cacheWantEntry(t, got, want)
				}
			}
		}
	})

	t.Run("list sorts by every field in both directions, comparing bytes and breaking ties by id ascending", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		seed := cacheListSeed()
		for _, e := range seed {
			cacheCreate(t, repo, e, cacheT0)
		}
		for _, field := range []domain.QueryField{domain.FieldDateCreated, domain.FieldDateUpdated, domain.FieldKey, domain.FieldType} {
			for _, desc := range []bool{false, true} {
				res := cacheList(t, repo, ports.ListQuery{Sort: []domain.SortKey{{Field: field, Desc: desc}}, Limit: 100}, cacheT0)
				what := field.String()
				if desc {
					what += " desc"
				}
				cacheWantIDs(t, "List sorted by "+what, res.Entries, cacheSorted(seed, field, desc))
			}
		}
	})

	t.Run("list pages with limit and offset and counts the total only when asked", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		seed := cacheListSeed()
		for _, e := range seed {
			cacheCreate(t, repo, e, cacheT0)
		}
		all := cacheSorted(seed, domain.FieldKey, false)
		for _, p := range []struct{ limit, offset int }{{3, 0}, {3, 3}, {3, 6}, {3, 8}, {3, 100}, {100, 0}, {1, 7}, {0, 0}, {0, 2}} {
			q := ports.ListQuery{Sort: []domain.SortKey{{Field: domain.FieldKey}}, Limit: p.limit, Offset: p.offset}
			from, to := min(p.offset, len(all)), min(p.offset+p.limit, len(all))
			res := cacheList(t, repo, q, cacheT0)
			cacheWantIDs(t, "a page", res.Entries, all[from:to])
			if res.Total != 0 {
				t.Errorf("List without CountTotal: total = %d, want 0", res.Total)
			}
			q.CountTotal = true
			res = cacheList(t, repo, q, cacheT0)
			cacheWantIDs(t, "a page with its total", res.Entries, all[from:to])
			if res.Total != len(seed) {
				t.Errorf("List(limit %d, offset %d) total = %d, want %d", p.limit, p.offset, res.Total, len(seed))
			}
		}
	})

	t.Run("list leaves out deleted and expired entries, in the page and in the total", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		now := cacheT0.Add(time.Hour)
		var live []string
		for i := range 6 {
			e := cacheEntry(i)
			switch i % 3 {
			case 1:
				e.ExpiresAt = cacheAt(now)
			case 2:
				e.ExpiresAt = cacheAt(now.Add(time.Microsecond))
				live = append(live, e.ID)
			default:
				live = append(live, e.ID)
			}
			cacheCreate(t, repo, e, cacheT0)
		}
		if _, err := repo.Delete(t.Context(), cacheID(0), cacheT0, func(domain.Entry) error { return nil }); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		live = live[1:]
		res := cacheList(t, repo, ports.ListQuery{Limit: 100, CountTotal: true}, now)
		cacheWantIDs(t, "List", res.Entries, live)
		if res.Total != len(live) {
			t.Errorf("total = %d, want %d", res.Total, len(live))
		}
	})
}

func cachePurgeTests(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Run("purge removes dead rows only, at most limit per call, and reports how many", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		now := cacheT0.Add(time.Hour)
		later := now.Add(time.Hour)
		var live []domain.Entry
		for i := range 12 {
			e := cacheEntry(i)
			switch {
			case i < 4: // deleted below
			case i < 7:
				e.ExpiresAt = cacheAt(now.Add(-time.Duration(i) * time.Second))
			case i == 7:
				e.ExpiresAt = cacheAt(now) // dead from now on
			case i == 8:
				e.ExpiresAt = cacheAt(later) // dead only later
				live = append(live, e)
			default:
				live = append(live, e)
			}
			cacheCreate(t, repo, e, cacheT0)
		}
		for i := range 4 {
			if _, err := repo.Delete(t.Context(), cacheID(i), cacheT0, func(domain.Entry) error { return nil }); err != nil {
				t.Fatalf("Delete = %v", err)
			}
		}
		for _, c := range []struct{ limit, want int }{{0, 0}, {-1, 0}, {5, 5}, {5, 3}, {5, 0}} {
			if n, err := repo.Purge(t.Context(), now, c.limit); err != nil || n != c.want {
				t.Errorf("Purge(limit %d) = %d, %v; want %d", c.limit, n, err, c.want)
			}
		}
		for _, e := range live {
			cacheWantEntry(t, cacheGet(t, repo, e.ID, now), e)
		}
		if n, err := repo.Purge(t.Context(), later, 100); err != nil || n != 1 {
			t.Errorf("Purge once the last expiry passed = %d, %v; want 1", n, err)
		}
		// Purged ids and natural keys are free, as they were before.
		for i := range 8 {
			cacheCreate(t, repo, cacheEntry(i), later)
		}
	})

	t.Run("concurrent purges together remove each dead row once", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		const dead, live, purgers = 40, 5, 4
		now := cacheT0.Add(time.Hour)
		for i := range dead + live {
			e := cacheEntry(i)
			switch {
			case i%2 == 0 && i < dead:
				e.ExpiresAt = cacheAt(now)
			case i < dead:
				e.AssigneeID = cacheAssignee(1)
			}
			cacheCreate(t, repo, e, cacheT0)
		}
		if n, err := repo.DeleteByAssignee(t.Context(), cacheAssignee(1), cacheT0); err != nil || n != dead/2 {
			t.Fatalf("DeleteByAssignee = %d, %v; want %d", n, err, dead/2)
		}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			total int
		)
		for range purgers {
			wg.Go(func() {
				for {
					n, err := repo.Purge(t.Context(), now, 3)
					if err != nil {
						t.Errorf("Purge = %v", err)
						return
					}
					if n == 0 {
						return
					}
					mu.Lock()
					total += n
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if total != dead {
			t.Errorf("concurrent purges removed %d rows in all, want %d", total, dead)
		}
		res := cacheList(t, repo, ports.ListQuery{Limit: 100, CountTotal: true}, now)
		if res.Total != live {
			t.Errorf("%d entries left live, want %d", res.Total, live)
		}
	})
}
