package query_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)

// seed is a small table where every field varies and ties.
func seed() []domain.Entry {
	keys := []string{"ÄPFEL", "äpfel", "a%b", "a_b", `a\b`, "x", "Straße", "K", "k", "ǅ", "100%", "key"}
	var out []domain.Entry
	for i, k := range keys {
		e := domain.Entry{
			ID:          fmt.Sprintf("0190a5c0-0000-7000-8000-%012d", (i*5)%len(keys)),
			Key:         k,
			Type:        []string{"t1", "T1", "note"}[i%3],
			AssigneeID:  fmt.Sprintf("a55194ee-0000-4000-8000-%012d", i%2),
			Data:        []byte(`1`),
			Version:     1 + i%4,
			DateCreated: t0.Add(time.Duration(i%4) * time.Second),
			DateUpdated: t0.Add(time.Duration(i%3) * time.Microsecond),
		}
		if i%3 != 0 {
			x := t0.Add(time.Duration(20+i%2) * time.Hour)
			e.ExpiresAt = &x
		}
		out = append(out, e)
	}
	return out
}

func openStore(tb testing.TB, dsn string) ports.CacheRepository {
	tb.Helper()
	ctx := context.Background()
	db, err := bunstore.Open(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	if err := bunstore.Migrate(ctx, db, []string{"user_cache"}); err != nil {
		tb.Fatal(err)
	}
	return bunstore.NewCacheRepository(db, "user_cache")
}

func ids(tb testing.TB, r ports.CacheRepository, q ports.ListQuery) ([]string, int, error) {
	var out []string
	res, err := r.List(context.Background(), q, t0.Add(time.Hour), func(e domain.Entry) error {
		out = append(out, e.ID)
		return nil
	})
	return out, res.Total, err
}

// FuzzListQuery: for any query string, the parser either refuses it with
// a validation error (a 400) or accepts it, and then memstore, SQLite and
// PostgreSQL all run it without error and return the same entries in the
// same order, with the same total. Never a panic.
func FuzzListQuery(f *testing.F) {
	for _, q := range []string{
		"", "limit=10&page=2", "filter=key||$eq||a&filter=type||$eq||b", "sort=key,DESC", "offset=5&limit=1000",
		"assignee.id=x&key=%00", "page=0", "limit=-1", "sort=nope", "filter=key||$ne||a", "%zz", "cache=1",
		"filter=key||$contL||%C3%A4P&or=type||$eq||note", "filter[]=key||$starts||a%25&or[]=version||$gt||2&or[]=key||$endsL||B",
		"s=%7B%22%24or%22%3A%5B%7B%22key%22%3A%7B%22%24contL%22%3A%22%C3%84%22%7D%7D%2C%7B%22version%22%3A%7B%22%24gt%22%3A1%2C%22%24lt%22%3A4%7D%7D%5D%7D",
		"s=%7B%22expirationDate%22%3Anull%7D&sort=expirationDate,DESC&sort=version,ASC",
		"filter=dateCreated||$gte||2030-01-02T03:04:06Z&filter=key||$cont||_",
		"filter=expirationDate||$between||2030-01-02T00:00:00Z,2030-01-03T00:00:00%2B01:00",
		"filter=id||$in||0190A5C0-0000-7000-8000-000000000005,x&sort=id,DESC",
		"filter=key||$notinL||K,%C3%A4PFEL&filter=key||$excl||%5C", "filter=version||$between||3,1",
		"filter=dateUpdated||$lt||0001-01-01T00:00:00%2B01:00", "filter=key||$eqL||%C7%84",
		"limit=1000&page=1073741824", "per_page=3&page=2&sort=key",
	} {
		f.Add(q)
	}
	mem := memstore.NewCacheRepository()
	stores := map[string]ports.CacheRepository{
		"SQLite":     openStore(f, "sqlite::memory:"),
		"PostgreSQL": openStore(f, pgtest.New(f)),
	}
	for _, e := range seed() {
		for _, r := range append(slices.Collect(func(yield func(ports.CacheRepository) bool) {
			for _, r := range stores {
				if !yield(r) {
					return
				}
			}
		}), mem) {
			if err := r.Create(context.Background(), e, t0, domain.Quota{}); err != nil {
				f.Fatal(err)
			}
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		in, err := ginhttp.ParseListQuery(raw, 100, 1000)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("%q: refused as %v, want a validation error (400): %v", raw, domain.KindOf(err), err)
			}
			return
		}
		if in.Limit < 1 || in.Limit > 1000 || in.Offset < 0 {
			t.Fatalf("%q accepted with limit %d offset %d", raw, in.Limit, in.Offset)
		}
		q := ports.ListQuery{Filter: in.Filter, Sort: in.Sort, Limit: in.Limit, Offset: in.Offset, CountTotal: true}
		want, wantTotal, err := ids(t, mem, q)
		if err != nil {
			t.Fatalf("%q on memstore: %v", raw, err)
		}
		for name, r := range stores {
			got, total, err := ids(t, r, q)
			if err != nil {
				t.Fatalf("%q on %s: %v", raw, name, err)
			}
			if !slices.Equal(got, want) || total != wantTotal {
				t.Fatalf("%q on %s: %v (total %d), memstore %v (total %d)", raw, name, got, total, want, wantTotal)
			}
		}
	})
}
