package bunstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// foldBenchKey returns the i-th key of BenchmarkFoldQuery: 250 characters,
// nearly all of them non-ASCII capitals (Latin-1, Greek, Cyrillic) that the
// fold changes, unique by its number.
func foldBenchKey(i int) string {
	const pattern = "ÄÖÜÉÈÊÇÑΑΒΓΔΕΖΗΘАБВГДЕЖЗИ"
	var b strings.Builder
	b.WriteString(fmt.Sprintf("Ключ-%06d-", i))
	for n := 12; n < domain.MaxKeyLen-5; {
		for _, r := range pattern {
			if n == domain.MaxKeyLen-5 {
				break
			}
			b.WriteRune(r)
			n++
		}
	}
	return b.String()
}

// BenchmarkFoldQuery compares each case-insensitive operator with its
// case-sensitive form on one assignee's 3,000 entries with 250-character
// non-ASCII keys, among 9,000 entries of three other assignees: a page of
// 100 with its total, the filter matching few rows so every one of the
// assignee's rows is tested (docs/benchmarks.md, "Case-insensitive
// operators"). "many" ORs 49 conditions of the operator, the most a query
// may hold beside the owner's. With -v each logs its plan.
//
//	go test -tags nomsgpack,grpcnotrace -run '^$' -bench BenchmarkFoldQuery -benchtime 20x ./adapters/bunstore/
func BenchmarkFoldQuery(b *testing.B) {
	const own, others = 3000, 3
	for _, be := range benchBackends(b) {
		db := be.open(b)
		repo := NewCacheRepository(db, "bench_cache")
		owner := "f01dbe7c-0000-4000-8000-000000000000"
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < own*(others+1); i += 8 {
					e := testEntry(i)
					e.Key = foldBenchKey(i % own)
					e.AssigneeID = fmt.Sprintf("f01dbe7c-0000-4000-8000-%012d", i/own)
					if err := repo.Create(context.Background(), e, testNow, domain.Quota{}); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			b.Fatalf("seed: %v", errs[0])
		}
		if _, err := db.sql.ExecContext(context.Background(), "ANALYZE"); err != nil {
			b.Fatal(err)
		}
		// hit is a whole key (one row), miss a text in no key; both in the
		// case of the stored keys, so that the folded form matches as
		// much as the plain one.
		hit, miss := foldBenchKey(1234), "ДЕЖЗИ-nowhere"
		for _, c := range []struct {
			name string
			op   domain.QueryOp
			vals []string
		}{
			{"eq", domain.OpEq, []string{hit}},
			{"ne", domain.OpNe, []string{hit}},
			{"starts", domain.OpStarts, []string{hit[:200]}},
			{"ends", domain.OpEnds, []string{miss}},
			{"cont", domain.OpCont, []string{miss}},
			{"excl", domain.OpExcl, []string{hit[10:200]}},
			{"in", domain.OpIn, []string{hit, miss, foldBenchKey(5)}},
			{"notin", domain.OpNotIn, []string{hit, miss, foldBenchKey(5)}},
		} {
			for _, many := range []bool{false, true} {
				for _, fold := range []bool{false, true} {
					cond, err := domain.NewCondition("bench", domain.FieldKey, c.op, fold, c.vals)
					if err != nil {
						b.Fatal(err)
					}
					f := domain.Where(cond)
					if many {
						subs := make([]domain.Filter, domain.MaxQueryConditions-1)
						for i := range subs {
							subs[i] = f
						}
						f = domain.AnyOf(subs...)
					}
					name := c.name
					if fold {
						name += "L"
					}
					if many {
						name += "-many"
					}
					q := ports.ListQuery{Owner: owner, Limit: 100, CountTotal: true, Filter: f}
					b.Run(be.name+"/"+name, func(b *testing.B) {
						if testing.Verbose() {
							b.Logf("plan: %s", listPlan(b, db, q))
						}
						for b.Loop() {
							if _, err := repo.List(context.Background(), q, testNow, func(domain.Entry) error { return nil }); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}
