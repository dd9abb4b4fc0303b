package bunstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

// pagedDatabases runs fn on a fresh SQLite file and a fresh PostgreSQL
// database, each opened with opts.
func pagedDatabases(t *testing.T, fn func(t *testing.T, db *DB), opts ...Option) {
	t.Helper()
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		db, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "page.db"), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		fn(t, db)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		db, err := Open(t.Context(), pgtest.New(t), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		fn(t, db)
	})
}

// pagedRepo migrates table and returns its repository with the page
// bounds p and opts.
func pagedRepo(t *testing.T, db *DB, table string, p listPaging, opts ...Option) *CacheRepository {
	t.Helper()
	if err := Migrate(t.Context(), db, []string{table}); err != nil {
		t.Fatal(err)
	}
	r := NewCacheRepository(db.with(opts...), table)
	r.paging = p
	return r
}

func TestAListWhoseReaderWaitsHoldsNoConnection(t *testing.T) {
	t.Parallel()
	pagedDatabases(t, func(t *testing.T, db *DB) {
		repo := pagedRepo(t, db, "user_cache", listPaging{rows: 7})
		seed(t, db, "user_cache", 50, time.Time{})
		blocked, release := make(chan int, 1), make(chan struct{})
		var (
			got  int
			once sync.Once
		)
		done := make(chan error, 1)
		go func() {
			_, err := repo.List(context.Background(), ports.ListQuery{Limit: 1000}, testNow, func(domain.Entry) error {
				got++
				if got == 3 {
					once.Do(func() {
						blocked <- db.sql.DB.Stats().InUse
						<-release
					})
				}
				return nil
			})
			done <- err
		}()
		if inUse := <-blocked; inUse != 0 {
			t.Errorf("connections in use while the list waits on its reader: %d, want 0", inUse)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got != 50 {
			t.Errorf("listed %d entries, want 50", got)
		}
	})
}

// pageFixture creates entries with many ties on every sort field and a
// NULL expiry on a third of them.
func pageFixture(t *testing.T, repo *CacheRepository) {
	t.Helper()
	for i := range 61 {
		e := testEntry(i)
		e.Key = fmt.Sprintf("k%d", i%7)
		e.Type = fmt.Sprintf("t%d", i%3)
		e.AssigneeID = fmt.Sprintf("a55194ee-0000-4000-8000-%012d", i%4)
		e.Version = 1 + i%3
		e.DateCreated = testNow.Add(-time.Duration(i%4) * time.Hour)
		e.DateUpdated = testNow.Add(-time.Duration(i%3) * time.Minute)
		if i%3 != 0 {
			e.ExpiresAt = new(testNow.Add(time.Duration(1+i%2) * time.Hour))
		}
		e.Data = fmt.Appendf(nil, `{"n":%d,"pad":"%0*d"}`, i, 20+i*7, 0)
		if err := repo.Create(t.Context(), e, testNow, domain.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
}

// oneStatement is List as one statement: what the pages must add up to.
func oneStatement(t *testing.T, repo *CacheRepository, q ports.ListQuery) []string {
	t.Helper()
	cond, args, err := listWhere(repo.eng, repo.table, q, testNow)
	if err != nil {
		t.Fatal(err)
	}
	order, err := listOrder(q.Sort)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := repo.db.QueryContext(t.Context(), "SELECT id FROM ? WHERE "+cond+" ORDER BY "+order+" LIMIT ? OFFSET ?",
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestPagedListsEqualTheOneStatementList(t *testing.T) {
	t.Parallel()
	pagedDatabases(t, func(t *testing.T, db *DB) {
		byRows := pagedRepo(t, db, "user_cache", listPaging{rows: 3})
		pageFixture(t, byRows)
		// A page of about three of these entries' bytes: the pages stop
		// at their bytes, not at their rows.
		byBytes := NewCacheRepository(db, "user_cache")
		byBytes.paging = listPaging{rows: 50, bytes: 3 * (entryOverhead + 200)}
		fields := []domain.QueryField{domain.FieldID, domain.FieldKey, domain.FieldType, domain.FieldAssigneeID,
			domain.FieldVersion, domain.FieldDateCreated, domain.FieldDateUpdated, domain.FieldExpirationDate}
		var sorts [][]domain.SortKey
		sorts = append(sorts, nil)
		for _, f := range fields {
			sorts = append(sorts, []domain.SortKey{{Field: f}}, []domain.SortKey{{Field: f, Desc: true}})
		}
		sorts = append(sorts,
			[]domain.SortKey{{Field: domain.FieldExpirationDate, Desc: true}, {Field: domain.FieldKey}},
			[]domain.SortKey{{Field: domain.FieldType}, {Field: domain.FieldExpirationDate}, {Field: domain.FieldVersion, Desc: true}},
			[]domain.SortKey{{Field: domain.FieldKey}, {Field: domain.FieldDateCreated}},
			[]domain.SortKey{{Field: domain.FieldAssigneeID, Desc: true}, {Field: domain.FieldExpirationDate}, {Field: domain.FieldDateUpdated}})
		for _, sort := range sorts {
			for _, q := range []ports.ListQuery{
				{Sort: sort, Limit: 1000},
				{Sort: sort, Limit: 17, Offset: 5},
				{Sort: sort, Limit: 1000, Owner: "a55194ee-0000-4000-8000-000000000001"},
			} {
				want := oneStatement(t, byRows, q)
				for name, repo := range map[string]*CacheRepository{"rows": byRows, "bytes": byBytes} {
					var got []string
					if _, err := repo.List(t.Context(), q, testNow, func(e domain.Entry) error {
						got = append(got, e.ID)
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("pages bounded by %s, sort %v, limit %d offset %d owner %q:\n got %v\nwant %v",
							name, sort, q.Limit, q.Offset, q.Owner, got, want)
					}
				}
			}
		}
	})
}

// expensiveQuery asks for every entry whose key contains "KEY" in any
// case, sorted by key: the fold function on every row, then a sort.
func expensiveQuery(t *testing.T) ports.ListQuery {
	t.Helper()
	c, err := domain.NewCondition("filter", domain.FieldKey, domain.OpCont, true, []string{"KEY"})
	if err != nil {
		t.Fatal(err)
	}
	return ports.ListQuery{Filter: domain.Where(c), Sort: []domain.SortKey{{Field: domain.FieldKey, Desc: true}}, Limit: 10, CountTotal: true}
}

func TestAListPastTheQueryBoundIsQueryTooExpensive(t *testing.T) {
	t.Parallel()
	pagedDatabases(t, func(t *testing.T, db *DB) {
		if err := Migrate(t.Context(), db, []string{"user_cache"}); err != nil {
			t.Fatal(err)
		}
		seed(t, db, "user_cache", 20000, time.Time{})
		q := expensiveQuery(t)
		// A bound already past when the statement starts: the driver's
		// interrupt (SQLite) cannot lose a race with a statement that
		// happens to finish quickly on a loaded machine; PostgreSQL's
		// statement_timeout is then its least, 1 ms.
		bounded := NewCacheRepository(db.with(WithQueryTimeout(time.Nanosecond)), "user_cache")
		_, err := bounded.List(t.Context(), q, testNow, func(domain.Entry) error { return nil })
		if !errors.Is(err, domain.ErrQueryTooExpensive) || domain.KindOf(err) != domain.KindTooExpensive {
			t.Fatalf("List past the query bound = %v, want QUERY_TOO_EXPENSIVE", err)
		}
		if errors.Is(err, domain.ErrDatabaseUnavailable) {
			t.Errorf("List past the query bound also says DATABASE_UNAVAILABLE: %v", err)
		}
		// The same list under a bound it cannot reach answers: a
		// generous one, not the 2 s default, which a loaded machine
		// running -race can pass on this list.
		var n int
		generous := NewCacheRepository(db.with(WithTimeout(time.Minute), WithQueryTimeout(time.Minute)), "user_cache")
		res, err := generous.List(t.Context(), q, testNow, func(domain.Entry) error { n++; return nil })
		if err != nil || n != 10 || res.Total != 20000 {
			t.Fatalf("the same list under a generous bound: %d entries of %d, %v", n, res.Total, err)
		}
	})
}

// TestWaitingForAConnectionIsStillUnavailable: a list that cannot get a
// connection within the repository's timeout answers
// DATABASE_UNAVAILABLE, whatever its query bound.
func TestWaitingForAConnectionIsStillUnavailable(t *testing.T) {
	t.Parallel()
	const pool = 2 // PostgreSQL's Migrate needs two
	pagedDatabases(t, func(t *testing.T, db *DB) {
		var holding sync.WaitGroup
		holding.Add(pool)
		release := make(chan struct{})
		holder := pagedRepo(t, db, "user_cache", listPaging{rows: 1, rowRead: func(context.Context) {
			holding.Done()
			<-release
		}})
		seed(t, db, "user_cache", 5, time.Time{})
		done := make(chan error, pool)
		for range pool {
			go func() {
				_, err := holder.List(context.Background(), ports.ListQuery{Limit: 1}, testNow, func(domain.Entry) error { return nil })
				done <- err
			}()
		}
		holding.Wait()
		waiter := NewCacheRepository(db.with(WithTimeout(200*time.Millisecond), WithQueryTimeout(time.Millisecond)), "user_cache")
		_, err := waiter.List(t.Context(), ports.ListQuery{Limit: 10}, testNow, func(domain.Entry) error { return nil })
		close(release)
		if !errors.Is(err, domain.ErrDatabaseUnavailable) || errors.Is(err, domain.ErrQueryTooExpensive) {
			t.Errorf("List waiting for a connection of a pool in use = %v, want DATABASE_UNAVAILABLE", err)
		}
		for range pool {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}, WithMaxOpenConns(pool))
}

// TestANextPageIsAnIndexRange: a list's next page in the default order
// starts in the list index where the last page stopped (a range of the
// index, not a scan from its start and no sort), for an owner and across
// owners.
func TestANextPageIsAnIndexRange(t *testing.T) {
	t.Parallel()
	pagedDatabases(t, func(t *testing.T, db *DB) {
		if err := Migrate(t.Context(), db, []string{"range_cache"}); err != nil {
			t.Fatal(err)
		}
		explain := "EXPLAIN QUERY PLAN "
		if onPostgres(db) {
			explain = "EXPLAIN "
			// An empty table is read sequentially whatever the indexes.
			if _, err := db.sql.ExecContext(t.Context(), "SET enable_seqscan = off"); err != nil {
				t.Fatal(err)
			}
		}
		repo := NewCacheRepository(db, "range_cache")
		last := testEntry(7)
		for _, owner := range []string{last.AssigneeID, ""} {
			q := ports.ListQuery{Owner: owner, Limit: 1000}
			cond, args, err := listWhere(db.eng, repo.table, q, testNow)
			if err != nil {
				t.Fatal(err)
			}
			keys := sortKeys(nil)
			order, _ := listOrder(keys)
			p := repo.newPager(q.Limit, 0)
			p.after = &last
			query, qargs, err := p.statement(cond, args, keys, order)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.sql.QueryContext(t.Context(), explain+query, qargs...)
			if err != nil {
				t.Fatal(err)
			}
			var plan strings.Builder
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&plan, "%s\n", vals[len(vals)-1])
			}
			_ = rows.Close()
			text := plan.String()
			ranged := strings.Contains(text, "(date_created,id)>(?,?)") || // SQLite
				strings.Contains(text, "ROW(date_created, id) > ROW(") && strings.Contains(text, "Index Cond") // PostgreSQL
			if !ranged || strings.Contains(text, "TEMP B-TREE") || strings.Contains(text, "Sort") {
				t.Errorf("next page of owner %q:\n%s\nplan:\n%s", owner, query, text)
			}
		}
	})
}
