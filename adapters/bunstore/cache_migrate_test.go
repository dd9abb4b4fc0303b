package bunstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

func TestMigrateRejectsUnsafeOrCollidingTableNames(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite::memory:")
	for _, tables := range [][]string{
		{""},
		{"User_cache"},
		{"1cache"},
		{"user-cache"},
		{`cache"; DROP TABLE x; --`},
		{"é"},
		{strings.Repeat("a", 64)},
		{"cachegate_migrations"},
		{"users"},
		{"cache", "cache"},
		{"cache", "cache_natural_key"},
	} {
		if err := Migrate(t.Context(), db, tables); err == nil {
			t.Errorf("Migrate(%q) succeeded, want an error", tables)
		}
	}
	var n int
	if err := db.sql.NewRaw("SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(t.Context(), &n); err != nil || n != 0 {
		t.Errorf("a refused Migrate left %d tables (%v)", n, err)
	}
	long := strings.Repeat("a", 63)
	if err := Migrate(t.Context(), db, []string{"_", "user_cache", long, long[:60]}); err != nil {
		t.Errorf("Migrate of valid names = %v", err)
	}
}

func TestMigrateAppliesEachTableOnceAndAddsNewOnes(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "m.db"))
	for _, tables := range [][]string{{"a_cache"}, {"a_cache"}, {"a_cache", "b_cache"}} {
		if err := Migrate(t.Context(), db, tables); err != nil {
			t.Fatalf("Migrate(%q) = %v", tables, err)
		}
	}
	var names []string
	if err := db.sql.NewRaw("SELECT name FROM cachegate_migrations WHERE name LIKE '%cache%' ORDER BY id").Scan(t.Context(), &names); err != nil {
		t.Fatalf("read the migration history: %v", err)
	}
	want := "20261125000100_cache_a_cache 20261125000300_cache_a_cache_list " +
		"20261126000100_cache_changes 20261126000200_cache_a_cache_changes 20261126100100_cache_a_cache_list_covering " +
		"20261201000100_cache_usage 20261201000200_cache_a_cache_usage 20261202000100_cache_a_cache_changes_removed " +
		"20261204000100_cache_a_cache_folded 20261210000100_cache_changes_assignee 20261220000200_cache_a_cache_usage_kept " +
		"20261125000100_cache_b_cache 20261125000300_cache_b_cache_list 20261126000200_cache_b_cache_changes " +
		"20261126100100_cache_b_cache_list_covering 20261201000200_cache_b_cache_usage 20261202000100_cache_b_cache_changes_removed " +
		"20261204000100_cache_b_cache_folded 20261220000200_cache_b_cache_usage_kept"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("migration history = %s, want %s", got, want)
	}
	for _, table := range []string{"a_cache", "b_cache"} {
		if err := NewCacheRepository(db, table).Create(t.Context(), testEntry(1), testNow, domain.Quota{}); err != nil {
			t.Errorf("Create in %s = %v", table, err)
		}
	}
}

// migrateConcurrently runs Migrate on every db at once and fails t unless
// all succeed.
func migrateConcurrently(t *testing.T, dbs []*DB, tables []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(dbs))
	for i, db := range dbs {
		wg.Go(func() { errs[i] = Migrate(t.Context(), db, tables) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Migrate: %v", err)
	}
	for _, db := range dbs {
		for _, table := range tables {
			repo := NewCacheRepository(db, table)
			if _, err := repo.Get(t.Context(), "x", testNow); !errors.Is(err, domain.ErrCacheNotFound) {
				t.Errorf("Get on %s after Migrate = %v, want ErrCacheNotFound", table, err)
			}
		}
	}
}

func TestMigrateConcurrentlyOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	dbs := make([]*DB, 4)
	for i := range dbs {
		dbs[i] = openTestDB(t, dsn)
	}
	migrateConcurrently(t, dbs, []string{"user_cache", "org_cache"})
	migrateConcurrently(t, dbs, []string{"user_cache", "org_cache", "team_cache"})
}

func TestMigrateConcurrentlyOnOneSQLiteFile(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "m.db")
	dbs := []*DB{openTestDB(t, dsn), openTestDB(t, dsn), openTestDB(t, dsn)}
	migrateConcurrently(t, dbs, []string{"user_cache", "org_cache"})
}

func TestPurgeByTwoReplicasOnPostgresRemovesEachRowOnce(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	a, b := openTestDB(t, dsn), openTestDB(t, dsn)
	repo := migrateTable(t, a, "user_cache")
	const dead, live = 600, 10
	seed(t, a, "user_cache", dead, testNow.Add(-time.Second))
	for i := range live {
		if err := repo.Create(t.Context(), testEntry(dead+i), testNow, domain.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i, db := range []*DB{a, b} {
		r := NewCacheRepository(db, "user_cache")
		wg.Go(func() {
			for {
				n, err := r.Purge(t.Context(), testNow, 25)
				if err != nil {
					t.Errorf("replica %d: Purge = %v", i, err)
					return
				}
				if n == 0 {
					return
				}
				counts[i] += n
			}
		})
	}
	wg.Wait()
	if counts[0]+counts[1] != dead {
		t.Errorf("replicas purged %d + %d rows, want %d in all", counts[0], counts[1], dead)
	}
	var n int
	if err := a.sql.NewRaw("SELECT count(*) FROM user_cache").Scan(t.Context(), &n); err != nil || n != live {
		t.Errorf("%d rows left (%v), want %d", n, err, live)
	}
}

func TestOpenConfiguresSQLite(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "p.db"))
	for pragma, want := range map[string]string{
		"journal_mode": "wal", "synchronous": "1", "busy_timeout": "5000", "foreign_keys": "1",
	} {
		var got string
		if err := db.sql.NewRaw("PRAGMA "+pragma).Scan(t.Context(), &got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
}

func TestOpenGivesEachMemoryDatabaseItsOwnData(t *testing.T) {
	t.Parallel()
	a := migrateTable(t, openTestDB(t, "sqlite::memory:"), "c")
	b := migrateTable(t, openTestDB(t, "sqlite::memory:"), "c")
	if err := a.Create(t.Context(), testEntry(1), testNow, domain.Quota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(t.Context(), testEntry(1).ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("another sqlite::memory: database sees the entry: %v", err)
	}
}

func TestOpenRejectsBadURLsWithoutRepeatingThem(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"", "mysql://u:s3cretpw@h/db", "sqlite:", "s3cretpw",
		"postgres://u:s3cretpw@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"postgres://u:s3cretpw@[bad",
	} {
		db, err := Open(ctx, dsn)
		if err == nil {
			_ = db.Close()
			t.Errorf("Open(%q) succeeded", dsn)
			continue
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("Open's error repeats the password: %v", err)
		}
	}
}

func TestListsReadAPageInIndexOrder(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "plan.db"))
	if err := Migrate(t.Context(), db, []string{"plan_cache"}); err != nil {
		t.Fatal(err)
	}
	// The query of List, with its liveness condition, as it reads a page.
	for _, filter := range []string{" AND assignee_id = 'a'", ""} {
		var plan []struct {
			ID, Parent, Notused int
			Detail              string
		}
		q := "EXPLAIN QUERY PLAN SELECT id FROM plan_cache WHERE " + strings.ReplaceAll(liveAt, "?", "0") + filter +
			" ORDER BY date_created ASC, id ASC LIMIT 100 OFFSET 0"
		if err := db.sql.NewRaw(q).Scan(t.Context(), &plan); err != nil {
			t.Fatal(err)
		}
		for _, p := range plan {
			if strings.Contains(p.Detail, "TEMP B-TREE") {
				t.Errorf("%q sorts every matching row: %s", q, p.Detail)
			}
		}
	}
}

// TestAnOwnersFilteredListReadsTheCoveringIndex checks what
// cacheCoveringMigration promises on both databases: the narrow list
// index is gone, the covering one exists, and an owner's page filtered on
// key and dateCreated is read through it (docs/benchmarks.md has what it
// saves: the key test no longer reads a row per candidate on SQLite).
func TestAnOwnersFilteredListReadsTheCoveringIndex(t *testing.T) {
	t.Parallel()
	cont, err := domain.NewCondition("list", domain.FieldKey, domain.OpCont, false, []string{"7"})
	if err != nil {
		t.Fatal(err)
	}
	since, err := domain.NewCondition("list", domain.FieldDateCreated, domain.OpGte, false, []string{"2030-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	q := ports.ListQuery{Owner: "a", Limit: 100, Filter: domain.AllOf(domain.Where(cont), domain.Where(since)),
		Sort: []domain.SortKey{{Field: domain.FieldDateCreated}}}
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "covering.db")
			indexes := "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cover_cache'"
			explain := "EXPLAIN QUERY PLAN "
			if engine == "postgres" {
				dsn = pgtest.New(t)
				indexes = "SELECT indexname FROM pg_indexes WHERE tablename = 'cover_cache'"
				explain = "EXPLAIN "
			}
			db := openTestDB(t, dsn)
			migrateTable(t, db, "cover_cache")
			var names []string
			if err := db.sql.NewRaw(indexes).Scan(t.Context(), &names); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(names, "cover_cache_assignee_list") || slices.Contains(names, "cover_cache_assignee_created") {
				t.Fatalf("indexes of cover_cache: %v; want cover_cache_assignee_list and no cover_cache_assignee_created", names)
			}
			if engine == "postgres" {
				// An empty table is read sequentially whatever the indexes.
				if _, err := db.sql.ExecContext(t.Context(), "SET enable_seqscan = off"); err != nil {
					t.Fatal(err)
				}
			}
			cond, args, err := listWhere(db.eng, bun.Ident("cover_cache"), q, testNow)
			if err != nil {
				t.Fatal(err)
			}
			order, _ := listOrder(q.Sort)
			rows, err := db.sql.QueryContext(t.Context(), explain+"SELECT "+cacheColumns+" FROM ? WHERE "+cond+" ORDER BY "+order+" LIMIT 100", args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, err := rows.Columns()
			if err != nil {
				t.Fatal(err)
			}
			var plan strings.Builder
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
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(plan.String(), "cover_cache_assignee_list") {
				t.Errorf("the filtered page is not read through the covering index:\n%s", plan.String())
			}
		})
	}
}

// TestAPurgeBatchWalksTheIndexesInOrderOnPostgres pins the plan of a purge
// batch on a table of expired rows without statistics, where PostgreSQL
// chose a scan of the table, or a bitmap of every expired row, both of
// which cost each batch of a long sweep in proportion to all the rows
// earlier batches removed (purgeStatement).
func TestAPurgeBatchWalksTheIndexesInOrderOnPostgres(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, pgtest.New(t))
	migrateTable(t, db, "sweep_cache")
	seed(t, db, "sweep_cache", 2000, testNow.Add(time.Hour))
	later := testNow.Add(2 * time.Hour)
	query, args := db.eng.PurgeStatement(bun.Ident("sweep_cache"), later, 100)
	tx, err := db.sql.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(t.Context(), engine.PurgePlan); err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := tx.NewRaw("EXPLAIN "+query, args...).Scan(t.Context(), &lines); err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	for _, bad := range []string{"Seq Scan on sweep_cache", "Bitmap", "Sort"} {
		if strings.Contains(plan, bad) {
			t.Errorf("the purge batch's plan has %q:\n%s", bad, plan)
		}
	}
	for _, walk := range []string{"Index Scan using sweep_cache_deleted", "Index Scan using sweep_cache_expiring"} {
		if !strings.Contains(plan, walk) {
			t.Errorf("the purge batch's plan has no %q:\n%s", walk, plan)
		}
	}
	var n int64
	if res, err := tx.ExecContext(t.Context(), query, args...); err != nil {
		t.Fatal(err)
	} else if n, _ = res.RowsAffected(); n != 100 {
		t.Fatalf("the batch removed %d rows, want 100", n)
	}
}
