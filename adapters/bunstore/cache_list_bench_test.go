package bunstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// BenchmarkListPage reads one page (100 entries) of one assignee's list
// among CACHEGATE_BENCH_ROWS entries of 100 assignees (docs/benchmarks.md
// has the figures for 1 M):
//
//   - plain: the bare list, in its default order (dateCreated, id);
//
//   - filtered: key $cont "7" (about one key in five of this assignee's
//     second half) AND dateCreated $gte the middle of the table's time
//     span, sorted dateCreated ASC;
//
//   - filtered-desc: the same, sorted dateCreated DESC (the id tie-break
//     stays ascending, so the index order is not the answer's);
//
//   - filtered-contL: key $contL "7": the filtered query on the folded key.
//
//   - all-1000: 1000 entries of every assignee, in the default order: a
//     list of several pages (cache_page.go).
//
//     CACHEGATE_BENCH_ROWS=1000000 go test -tags nomsgpack,grpcnotrace -run '^$' -bench BenchmarkListPage -benchtime 200x ./adapters/bunstore/
func BenchmarkListPage(b *testing.B) {
	rows := benchRows(b)
	for _, be := range benchBackends(b) {
		db := be.open(b)
		start := time.Now()
		seedDated(b, db, "bench_cache", rows)
		b.Logf("%s: seeded %d rows in %v", be.name, rows, time.Since(start).Round(time.Millisecond))
		repo := NewCacheRepository(db, "bench_cache")
		owner := fmt.Sprintf("a55194ee-0000-4000-8000-%012d", 42)
		mid := testNow.Add(-time.Duration(rows/2) * time.Second)
		cond := func(f domain.QueryField, op domain.QueryOp, fold bool, v string) domain.Filter {
			c, err := domain.NewCondition("bench", f, op, fold, []string{v})
			if err != nil {
				b.Fatal(err)
			}
			return domain.Where(c)
		}
		since := cond(domain.FieldDateCreated, domain.OpGte, false, mid.Format(time.RFC3339Nano))
		for _, c := range []struct {
			name string
			q    ports.ListQuery
		}{
			{"plain", ports.ListQuery{Owner: owner, Limit: 100}},
			{"filtered", ports.ListQuery{Owner: owner, Limit: 100,
				Filter: domain.AllOf(cond(domain.FieldKey, domain.OpCont, false, "7"), since),
				Sort:   []domain.SortKey{{Field: domain.FieldDateCreated}}}},
			{"filtered-desc", ports.ListQuery{Owner: owner, Limit: 100,
				Filter: domain.AllOf(cond(domain.FieldKey, domain.OpCont, false, "7"), since),
				Sort:   []domain.SortKey{{Field: domain.FieldDateCreated, Desc: true}}}},
			{"filtered-contL", ports.ListQuery{Owner: owner, Limit: 100,
				Filter: domain.AllOf(cond(domain.FieldKey, domain.OpCont, true, "7"), since),
				Sort:   []domain.SortKey{{Field: domain.FieldDateCreated}}}},
			{"all-1000", ports.ListQuery{Limit: 1000}},
		} {
			b.Run(fmt.Sprintf("%s/rows=%d/%s", be.name, rows, c.name), func(b *testing.B) {
				b.ReportAllocs()
				if testing.Verbose() {
					b.Logf("plan: %s", listPlan(b, db, c.q))
				}
				for b.Loop() {
					n := 0
					_, err := repo.List(context.Background(), c.q, testNow, func(domain.Entry) error { n++; return nil })
					if err != nil || n == 0 {
						b.Fatalf("%d entries, %v", n, err)
					}
				}
			})
		}
	}
}

// seedDated inserts n entries like seed, but created one second apart,
// the last at testNow, in batches of multi-row INSERTs, one transaction
// per 50 batches.
func seedDated(tb testing.TB, db *DB, table string, n int) {
	tb.Helper()
	ctx := context.Background()
	const batch, perTx = 500, 50
	for txFrom := 0; txFrom < n; txFrom += batch * perTx {
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			tb.Fatal(err)
		}
		for from := txFrom; from < min(txFrom+batch*perTx, n); from += batch {
			var sb strings.Builder
			args := []any{bun.Ident(table)}
			sb.WriteString("INSERT INTO ? (id, key, type, assignee_id, data, version, date_created, date_updated) VALUES ")
			for i := from; i < min(from+batch, n); i++ {
				if i > from {
					sb.WriteString(", ")
				}
				e := testEntry(i)
				at := testNow.Add(-time.Duration(n-i) * time.Second)
				sb.WriteString("(?, ?, ?, ?, ?, 1, ?, ?)")
				args = append(args, e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), engine.TimeArg(at), engine.TimeArg(at))
			}
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				_ = tx.Rollback()
				tb.Fatalf("seed: %v", err)
			}
		}
		if err := tx.Commit(); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := db.sql.ExecContext(ctx, "ANALYZE"); err != nil {
		tb.Fatal(err)
	}
}

// listPlan returns the database's plan of q.
func listPlan(tb testing.TB, db *DB, q ports.ListQuery) string {
	cond, args, err := listWhere(db.eng, bun.Ident("bench_cache"), q, testNow)
	if err != nil {
		tb.Fatal(err)
	}
	order, _ := listOrder(q.Sort)
	explain := "EXPLAIN QUERY PLAN "
	if onPostgres(db) {
		explain = "EXPLAIN "
	}
	rows, err := db.sql.QueryContext(context.Background(), explain+"SELECT "+cacheColumns+" FROM ? WHERE "+cond+" ORDER BY "+order+" LIMIT 100", args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals[len(vals)-1]))
	}
	return strings.Join(out, " | ")
}
