package bunstore

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
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

// foldEngines opens a fresh database of each engine for a fold test.
func foldEngines(t *testing.T) map[string]func(t *testing.T) *DB {
	return map[string]func(t *testing.T) *DB{
		"sqlite": func(t *testing.T) *DB {
			return openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "fold.db"))
		},
		"postgres": func(t *testing.T) *DB { return openTestDB(t, pgtest.New(t)) },
	}
}

// storedFolds returns key_folded and type_folded of the row id (nil: NULL).
func storedFolds(t *testing.T, db *DB, table, id string) (key, typ *string) {
	t.Helper()
	var k, ty sql.NullString
	if err := db.sql.QueryRowContext(t.Context(), "SELECT key_folded, type_folded FROM ? WHERE id = ?", bun.Ident(table), id).Scan(&k, &ty); err != nil {
		t.Fatalf("read the folds of %s: %v", id, err)
	}
	if k.Valid {
		key = &k.String
	}
	if ty.Valid {
		typ = &ty.String
	}
	return key, typ
}

func foldString(p *string) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", *p)
}

// TestEveryWriteStoresTheFoldedKeyAndType checks each write path of an
// entry (a create alone, creates batched together, an update, an import):
// key_folded and type_folded hold domain.FoldCase of a key and type with
// capitals, and NULL for those that are their own fold.
func TestEveryWriteStoresTheFoldedKeyAndType(t *testing.T) {
	t.Parallel()
	for name, open := range foldEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := open(t)
			repo := migrateTable(t, db, "fold_cache")
			check := func(what, id, key, typ string) {
				t.Helper()
				k, ty := storedFolds(t, db, "fold_cache", id)
				want := func(s string) string {
					if f := domain.FoldCase(s); f != s {
						return fmt.Sprintf("%q", f)
					}
					return "NULL"
				}
				if foldString(k) != want(key) || foldString(ty) != want(typ) {
					t.Errorf("%s of key %q, type %q stored key_folded %s, type_folded %s; want %s, %s",
						what, key, typ, foldString(k), foldString(ty), want(key), want(typ))
				}
			}
			ctx := t.Context()
			// Created one at a time, under a quota and without.
			for i, kt := range [][2]string{{"ÄPFEL", "Typ-Ω"}, {"äpfel", "typ"}, {"Straße", "TYPE"}, {"MiXeD", "ΣΊΣΥΦΟΣ"}} {
				e := testEntry(i)
				e.Key, e.Type = kt[0], kt[1]
				q := domain.Quota{}
				if i%2 == 1 {
					q = domain.Quota{MaxEntries: 1000, MaxBytes: 1 << 30}
				}
				if err := repo.Create(ctx, e, testNow, q); err != nil {
					t.Fatalf("Create: %v", err)
				}
				check("a create", e.ID, e.Key, e.Type)
			}
			// Created at once (batched into one INSERT on PostgreSQL, one
			// transaction on SQLite), half under a quota.
			var wg sync.WaitGroup
			for i := 10; i < 40; i++ {
				wg.Go(func() {
					e := testEntry(i)
					e.Key, e.Type = fmt.Sprintf("Ключ-%d", i), fmt.Sprintf("typ-%d", i)
					if i%3 == 0 {
						e.Key = fmt.Sprintf("ключ-%d", i)
					}
					q := domain.Quota{}
					if i%2 == 0 {
						q = domain.Quota{MaxEntries: 1000, MaxBytes: 1 << 30}
					}
					if err := repo.Create(ctx, e, testNow, q); err != nil {
						t.Errorf("Create: %v", err)
					}
				})
			}
			wg.Wait()
			for i := 10; i < 40; i++ {
				e := testEntry(i)
				key := fmt.Sprintf("Ключ-%d", i)
				if i%3 == 0 {
					key = fmt.Sprintf("ключ-%d", i)
				}
				check("a concurrent create", e.ID, key, fmt.Sprintf("typ-%d", i))
			}
			// Updated: a key that gains capitals, then one that loses them.
			id := testEntry(1).ID
			for _, key := range []string{"ÄPFEL-NEU", "äpfel-neu"} {
				for _, q := range []domain.Quota{{}, {MaxEntries: 1000, MaxBytes: 1 << 30}} {
					if _, err := repo.Update(ctx, id, testNow, q, func(e *domain.Entry) error {
						e.Key, e.Type = key, strings.ToUpper(key)
						return nil
					}); err != nil {
						t.Fatalf("Update: %v", err)
					}
					check("an update", id, key, strings.ToUpper(key))
				}
			}
			// Imported.
			load, err := NewArchive(db).BeginLoad(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			imported := []domain.Entry{testEntry(50), testEntry(51)}
			imported[0].Key, imported[0].Type = "IMPORTÉ", "Typ"
			imported[1].Key, imported[1].Type = "importé", "typ"
			if _, err := load.AddEntries(ctx, "fold_cache", imported); err != nil {
				_ = load.Rollback()
				t.Fatalf("AddEntries: %v", err)
			}
			if err := load.Commit(); err != nil {
				t.Fatal(err)
			}
			for _, e := range imported {
				check("an import", e.ID, e.Key, e.Type)
			}
		})
	}
}

// foldSeed is the i-th entry of the old-schema database of
// TestAnOldSchemaMigratesAndAnswersFoldedQueries: keys and types in
// several cases and scripts, two assignees, some soft-deleted.
func foldSeed(i int) domain.Entry {
	e := testEntry(i)
	e.Key = []string{"ÄPFEL", "äpfel", "Straße", "STRASSE", "plain", "MiXeD", "ΣΊΣΥΦΟΣ"}[i%7] + fmt.Sprintf("-%04d", i)
	e.Type = []string{"Typ-Ω", "typ-ω", "TYP-Ω", "ANDERS-Ж"}[i%4]
	e.AssigneeID = fmt.Sprintf("a55194ee-0000-4000-8000-%012d", i%2)
	return e
}

// TestAnOldSchemaMigratesAndAnswersFoldedQueries builds the schema as it
// was before cacheFoldedMigration, with entries written the old way (no
// folded columns) in more than one batch of the backfill, migrates it, and
// checks that the L operators then answer exactly what domain.FoldCase
// says, that the backfill recorded no change and moved no count, and that
// the triggers still work after it.
func TestAnOldSchemaMigratesAndAnswersFoldedQueries(t *testing.T) {
	t.Parallel()
	const n = 2*foldBackfillBatch + 300
	for name, open := range foldEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := open(t)
			ctx := t.Context()
			if err := migrateBefore(ctx, db, []string{"fold_cache"}, cacheFoldedMigrationVersion); err != nil {
				t.Fatalf("migrate to the old schema: %v", err)
			}
			tx, err := db.sql.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for from := 0; from < n; from += 500 {
				var sb strings.Builder
				args := []any{}
				sb.WriteString("INSERT INTO fold_cache (" + cacheColumns + ") VALUES ")
				for i := from; i < min(from+500, n); i++ {
					if i > from {
						sb.WriteString(", ")
					}
					e := foldSeed(i)
					var deleted any
					if i%11 == 0 {
						deleted = engine.TimeArg(testNow)
					}
					sb.WriteString("(?, ?, ?, ?, ?, 1, ?, ?, ?, NULL)")
					args = append(args, e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), engine.TimeArg(e.DateCreated), engine.TimeArg(e.DateUpdated), deleted)
				}
				if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
					_ = tx.Rollback()
					t.Fatalf("seed: %v", err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			counts := func() string {
				var changes, entries, bytes int64
				if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+changesTable).Scan(&changes); err != nil {
					t.Fatal(err)
				}
				if err := db.sql.QueryRowContext(ctx, "SELECT coalesce(sum(entries), 0), coalesce(sum(bytes), 0) FROM "+usageTable).Scan(&entries, &bytes); err != nil {
					t.Fatal(err)
				}
				return fmt.Sprintf("%d changes, %d entries, %d bytes counted", changes, entries, bytes)
			}
			before := counts()

			if err := Migrate(ctx, db, []string{"fold_cache"}); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			if after := counts(); after != before {
				t.Errorf("the migration moved the change log or the counts: %s before, %s after", before, after)
			}
			k, ty := storedFolds(t, db, "fold_cache", foldSeed(18).ID)
			if k != nil {
				t.Errorf("a key that is its own fold has key_folded %s, want NULL", foldString(k))
			}
			if ty == nil || *ty != domain.FoldCase(foldSeed(18).Type) {
				t.Errorf("type_folded of %q = %s, want %q", foldSeed(18).Type, foldString(ty), domain.FoldCase(foldSeed(18).Type))
			}

			repo := NewCacheRepository(db, "fold_cache")
			telling := 0
			for _, c := range []struct {
				field domain.QueryField
				op    domain.QueryOp
				vals  []string
			}{
				{domain.FieldKey, domain.OpEq, []string{"äPFEL-0007"}},
				{domain.FieldKey, domain.OpNe, []string{"äPFEL-0007"}},
				{domain.FieldKey, domain.OpStarts, []string{"STRA"}},
				{domain.FieldKey, domain.OpEnds, []string{"ς-0006"}},
				{domain.FieldKey, domain.OpEnds, []string{"Σ-1098"}},
				{domain.FieldKey, domain.OpCont, []string{"SSE-1"}},
				{domain.FieldKey, domain.OpExcl, []string{"Ä"}},
				{domain.FieldKey, domain.OpIn, []string{"PLAIN-0004", "mixed-0005", "ΣΊΣΥΦΟΣ-0006", "straße-0002"}},
				{domain.FieldKey, domain.OpNotIn, []string{"PLAIN-0004", "mixed-0005"}},
				{domain.FieldType, domain.OpEq, []string{"typ-ω"}},
				{domain.FieldType, domain.OpCont, []string{"P-Ω"}},
				{domain.FieldAssigneeID, domain.OpEq, []string{"A55194EE-0000-4000-8000-000000000001"}},
			} {
				cond, err := domain.NewCondition("test", c.field, c.op, true, c.vals)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				live := 0
				for i := range n {
					e := foldSeed(i)
					if i%11 == 0 {
						continue
					}
					live++
					if foldMatches(e, c.field, c.op, c.vals) {
						want = append(want, e.ID)
					}
				}
				if len(want) > 0 && len(want) < live {
					telling++
				}
				var got []string
				res, err := repo.List(ctx, ports.ListQuery{Filter: domain.Where(cond), Limit: n, CountTotal: true}, testNow,
					func(e domain.Entry) error { got = append(got, e.ID); return nil })
				if err != nil {
					t.Fatalf("List %s%sL %q: %v", c.field, c.op, c.vals, err)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) || res.Total != len(want) {
					t.Errorf("%s %sL %q: %d entries (total %d), want %d", c.field, c.op, c.vals, len(got), res.Total, len(want))
				}
			}
			// An OR of $eqL and $inL on key (one $inL to the databases).
			var subs []domain.Filter
			for _, c := range []struct {
				op   domain.QueryOp
				vals []string
			}{{domain.OpEq, []string{"äPFEL-0007"}}, {domain.OpIn, []string{"PLAIN-0004", "STRASSE-0003"}}, {domain.OpEq, []string{"ÄPFEL-0007"}}} {
				cond, err := domain.NewCondition("test", domain.FieldKey, c.op, true, c.vals)
				if err != nil {
					t.Fatal(err)
				}
				subs = append(subs, domain.Where(cond))
			}
			var got []string
			if _, err := repo.List(ctx, ports.ListQuery{Filter: domain.AnyOf(subs...), Limit: n}, testNow,
				func(e domain.Entry) error { got = append(got, e.Key); return nil }); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if want := []string{"STRASSE-0003", "plain-0004", "ÄPFEL-0007"}; !slices.Equal(got, want) {
				t.Errorf("an OR of $eqL and $inL found %q, want %q", got, want)
			}
			if telling < 11 { // all but the final sigma's, which must match none
				t.Errorf("only %d cases match some entries but not all: the test proves little", telling)
			}

			// The triggers are back: a write is recorded and counted.
			e := foldSeed(n)
			if err := repo.Create(ctx, e, testNow, domain.Quota{}); err != nil {
				t.Fatal(err)
			}
			if after := counts(); after == before {
				t.Errorf("a create after the migration was neither recorded nor counted: %s", after)
			}
		})
	}
}

// foldMatches evaluates an L condition on e the way the query language
// defines it: both sides folded with domain.FoldCase.
func foldMatches(e domain.Entry, field domain.QueryField, op domain.QueryOp, vals []string) bool {
	v := map[domain.QueryField]string{domain.FieldKey: e.Key, domain.FieldType: e.Type, domain.FieldAssigneeID: e.AssigneeID}[field]
	v = domain.FoldCase(v)
	x := domain.FoldCase(vals[0])
	switch op {
	case domain.OpEq:
		return v == x
	case domain.OpNe:
		return v != x
	case domain.OpStarts:
		return strings.HasPrefix(v, x)
	case domain.OpEnds:
		return strings.HasSuffix(v, x)
	case domain.OpCont:
		return strings.Contains(v, x)
	case domain.OpExcl:
		return !strings.Contains(v, x)
	case domain.OpIn, domain.OpNotIn:
		in := slices.ContainsFunc(vals, func(s string) bool { return domain.FoldCase(s) == v })
		return in == (op == domain.OpIn)
	}
	panic("foldMatches: operator " + op.String())
}

// TestFoldedQueriesUseTheIndexesOfTheirPlainForms checks the plans of an
// owner's L queries on both databases, among 3,300 entries, 3,000 of them
// the owner's, a tenth with capitals in their keys: $eqL and $inL on
// key find their rows through the index of stored folded keys and the
// natural key's, as $eq and $in do through the natural key's, and a $contL
// page is read through the indexes a $cont page is read through.
func TestFoldedQueriesUseTheIndexesOfTheirPlainForms(t *testing.T) {
	t.Parallel()
	for name, open := range foldEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := open(t)
			migrateTable(t, db, "bench_cache")
			seed(t, db, "bench_cache", 3000, time.Time{})
			// A tenth of the keys with capitals, folded by their writes.
			repo := NewCacheRepository(db, "bench_cache")
			for i := 3000; i < 3300; i++ {
				e := testEntry(i)
				e.Key = fmt.Sprintf("Key-%d", i)
				if err := repo.Create(t.Context(), e, testNow, domain.Quota{}); err != nil {
					t.Fatal(err)
				}
			}
			// 3,000 of them the owner's, 300 another's.
			owner := testEntry(42).AssigneeID
			if _, err := db.sql.ExecContext(t.Context(), "UPDATE bench_cache SET assignee_id = ? WHERE id < ?", owner, testEntry(3000).ID); err != nil {
				t.Fatal(err)
			}
			if _, err := db.sql.ExecContext(t.Context(), "ANALYZE"); err != nil {
				t.Fatal(err)
			}
			indexes := regexp.MustCompile(`bench_cache_[a-z_]+`)
			for _, c := range []struct {
				op   domain.QueryOp
				vals []string
				// want are the indexes the L form reads; nil: those of
				// the plain form.
				want []string
			}{
				{domain.OpEq, []string{"key-42"}, []string{"bench_cache_folded_key", "bench_cache_natural_key"}},
				{domain.OpIn, []string{"key-42", "key-142"}, []string{"bench_cache_folded_key", "bench_cache_natural_key"}},
				{domain.OpCont, []string{"y-4"}, nil},
			} {
				plans := map[bool][]string{}
				for _, fold := range []bool{false, true} {
					cond, err := domain.NewCondition("test", domain.FieldKey, c.op, fold, c.vals)
					if err != nil {
						t.Fatal(err)
					}
					plan := listPlan(t, db, ports.ListQuery{Owner: owner, Limit: 100, Filter: domain.Where(cond)})
					used := indexes.FindAllString(plan, -1)
					slices.Sort(used)
					plans[fold] = slices.Compact(used)
				}
				want := c.want
				if want == nil {
					want = plans[false]
				}
				if len(want) == 0 || !slices.Equal(plans[true], want) {
					t.Errorf("%sL reads %v, want %v (%s reads %v)", c.op, plans[true], want, c.op, plans[false])
				}
			}
		})
	}
}
