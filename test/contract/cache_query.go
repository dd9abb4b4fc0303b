package contract

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// queryKeys are the keys of the query suite's entries: case pairs in and
// beyond ASCII, LIKE's metacharacters and characters whose upper and
// lower case differ in byte length.
var queryKeys = []string{
	"ÄPFEL", "äpfel", "Apfel", "apfel", "a%b", "a_b", `a\b`, "axb", "100%", "Straße",
	"STRASSE", "ǅemal", "KEY", "key", "x_%", "ÖL", "K", "k",
}

// querySeed returns the query suite's entries: every field varies and
// ties, a third never expire.
func querySeed() []domain.Entry {
	types := []string{"t1", "T1", "note", "Note", "n_te"}
	var out []domain.Entry
	for i, k := range queryKeys {
		e := cacheEntry(100 + (i*7)%len(queryKeys)) // ids not in key order
		e.Key = k
		e.Type = types[i%len(types)]
		e.AssigneeID = cacheAssignee(i % 3)
		e.Version = 1 + i%4
		e.DateCreated = cacheT0.Add(time.Duration(i%5) * time.Second)
		e.DateUpdated = cacheT0.Add(time.Duration(i%3) * time.Microsecond)
		if i%3 != 0 {
			e.ExpiresAt = cacheAt(cacheT0.Add(time.Duration(24+i%4) * time.Hour))
		}
		out = append(out, e)
	}
	return out
}

// queryTime renders t as a query value.
func queryTime(t time.Time) string { return t.Format(time.RFC3339Nano) }

// queryGenerated returns, for every field and every operator that applies
// to it, conditions whose values come from the seed (so that they match
// something) and from outside it.
func queryGenerated(seed []domain.Entry) []qnode {
	texts := map[string][]string{}
	for _, e := range seed {
		texts["id"] = append(texts["id"], e.ID)
		texts["key"] = append(texts["key"], e.Key)
		texts["type"] = append(texts["type"], e.Type)
		texts["assignee.id"] = append(texts["assignee.id"], e.AssigneeID)
	}
	var out []qnode
	for _, field := range []string{"id", "key", "type", "assignee.id"} {
		vs := texts[field]
		a, b, c := vs[1], vs[4], vs[11]
		ua := strings.ToUpper(a)
		runes := []rune(b)
		for _, op := range []string{"$eq", "$ne", "$gt", "$lt", "$gte", "$lte", "eq", "ne", "$eqL", "$neL"} {
			out = append(out, qc(field, op, a), qc(field, op, ua), qc(field, op, "zz-none"))
		}
		out = append(out, qc(field, "$between", a, c), qc(field, "$between", c, a), qc(field, "between", "A", "a"))
		for _, op := range []string{"$in", "$notin", "$inL", "$notinL", "in", "notin"} {
			out = append(out, qc(field, op, a), qc(field, op, a, ua, c), qc(field, op, "zz-none"))
		}
		for _, op := range []string{"$starts", "$ends", "$cont", "$excl", "$startsL", "$endsL", "$contL", "$exclL", "starts", "cont"} {
			out = append(out,
				qc(field, op, string(runes[:1])), qc(field, op, strings.ToUpper(string(runes[:1]))),
				qc(field, op, string(runes[len(runes)-1:])), qc(field, op, ""), qc(field, op, b), qc(field, op, "zz-none"))
		}
		for _, op := range []string{"$isnull", "$notnull", "isnull"} {
			out = append(out, qc(field, op))
		}
	}
	for _, v := range []string{"1", "2", "4", "0", "-3", "9000000000"} {
		for _, op := range []string{"$eq", "$ne", "$gt", "$lt", "$gte", "$lte", "gte"} {
			out = append(out, qc("version", op, v))
		}
	}
	out = append(out, qc("version", "$in", "1", "3"), qc("version", "$notin", "1", "3"), qc("version", "$between", "2", "3"),
		qc("version", "$between", "3", "2"), qc("version", "$isnull"), qc("version", "$notnull"))
	for _, field := range []string{"dateCreated", "dateUpdated", "expirationDate"} {
		var vals []string
		for _, e := range []domain.Entry{seed[1], seed[2], seed[7]} {
			switch field {
			case "dateCreated":
				vals = append(vals, queryTime(e.DateCreated))
			case "dateUpdated":
				vals = append(vals, queryTime(e.DateUpdated))
			default:
				vals = append(vals, queryTime(*e.ExpiresAt))
			}
		}
		// The same instant in another zone, and one with nanoseconds the
		// stores do not keep.
		tm, _ := time.Parse(time.RFC3339Nano, vals[0])
		vals = append(vals, tm.In(time.FixedZone("x", 2*3600)).Format(time.RFC3339Nano), queryTime(tm.Add(999)))
		for _, v := range vals {
			for _, op := range []string{"$eq", "$ne", "$gt", "$lt", "$gte", "$lte", "lt"} {
				out = append(out, qc(field, op, v))
			}
		}
		out = append(out, qc(field, "$in", vals[0], vals[2]), qc(field, "$notin", vals[0], vals[2]),
			qc(field, "$between", vals[0], vals[1]), qc(field, "$between", vals[1], vals[0]),
			qc(field, "$isnull"), qc(field, "$notnull"), qc(field, "notnull"))
	}
	return out
}

// queryHand are the cases written out: LIKE metacharacters, unicode case,
// NULL expiry, nesting.
var queryHand = []qnode{
	qc("key", "$cont", "%"),
	qc("key", "$cont", "_"),
	qc("key", "$cont", `\`),
	qc("key", "$starts", "a%"),
	qc("key", "$starts", "a_"),
	qc("key", "$ends", "_%"),
	qc("key", "$eq", "a_b"),
	qc("key", "$contL", "%B"),
	qc("key", "$excl", "%"),
	qc("key", "$exclL", "_"),
	qc("key", "$eq", "äpfel"),
	qc("key", "$eqL", "ÄPFEL"),
	qc("key", "$eqL", "äpfel"),
	qc("key", "$contL", "PFEL"),
	qc("key", "$cont", "PFEL"),
	qc("key", "$startsL", "Ä"),
	qc("key", "$starts", "ä"),
	qc("key", "$endsL", "SSE"),
	qc("key", "$eqL", "straße"),
	qc("key", "$eqL", "ǆemal"),
	qc("key", "$eqL", "ö"+"l"),
	qc("key", "$inL", "KEY", "k"),
	qc("key", "$notinL", "KEY", "k", "ÄPFEL"),
	qc("key", "$neL", "ÄPFEL"),
	qc("type", "$eq", "T1"),
	qc("type", "$eqL", "NOTE"),
	qc("type", "$cont", "_"),
	qc("assignee.id", "$eq", strings.ToUpper(cacheAssignee(1))),
	qc("expirationDate", "$isnull"),
	qc("expirationDate", "$ne", queryTime(cacheT0.Add(25*time.Hour))),
	qc("expirationDate", "$notin", queryTime(cacheT0.Add(25*time.Hour))),
	qc("expirationDate", "$lt", queryTime(cacheT0.Add(100*time.Hour))),
	qor(qc("expirationDate", "$isnull"), qc("expirationDate", "$gte", queryTime(cacheT0.Add(26*time.Hour)))),
	qand(qc("key", "$contL", "a"), qc("version", "$gt", "1"), qc("version", "$lt", "4")),
	qor(qand(qc("key", "$startsL", "a"), qc("type", "$eq", "t1")), qand(qc("key", "$endsL", "L"), qc("version", "$gte", "2"))),
	qand(qor(qc("type", "$eq", "t1"), qc("type", "$eq", "note")), qor(qc("version", "$eq", "1"), qc("expirationDate", "$isnull"))),
	qor(qand(qor(qc("key", "$eq", "K"), qc("key", "$eq", "k")), qc("version", "$ne", "3")), qc("key", "$contL", "%")),
	qor(),
	qand(),
	qand(qor(), qc("key", "$eq", "k")),
	qor(qand(), qc("key", "$eq", "k")),
}

// querySorts are the orders the suite checks.
var querySorts = [][]qsort{
	nil,
	{{field: "id"}}, {{field: "id", desc: true}},
	{{field: "key"}}, {{field: "key", desc: true}},
	{{field: "type"}}, {{field: "type", desc: true}},
	{{field: "assignee.id"}}, {{field: "assignee.id", desc: true}},
	{{field: "version"}}, {{field: "version", desc: true}},
	{{field: "dateCreated"}}, {{field: "dateCreated", desc: true}},
	{{field: "dateUpdated"}}, {{field: "dateUpdated", desc: true}},
	{{field: "expirationDate"}}, {{field: "expirationDate", desc: true}},
	{{field: "version"}, {field: "type", desc: true}},
	{{field: "dateCreated", desc: true}, {field: "version"}, {field: "expirationDate", desc: true}},
	{{field: "expirationDate"}, {field: "key", desc: true}},
}

// CacheQuery is the contract of the list query language on a store: for
// every operator on every field, their combinations and every order, the
// store answers exactly what the test's own evaluator computes.
func CacheQuery(t *testing.T, newRepo func(t *testing.T) ports.CacheRepository) {
	t.Helper()
	seed := querySeed()
	recs := make([]qrec, len(seed))
	for i, e := range seed {
		recs[i] = qrecOf(e)
	}
	setup := func(t *testing.T) ports.CacheRepository {
		repo := newRepo(t)
		for _, e := range seed {
			cacheCreate(t, repo, e, cacheT0)
		}
		// Dead rows never match, whatever the filter.
		dead := cacheEntry(900)
		dead.Key = "äpfel-dead"
		dead.ExpiresAt = cacheAt(cacheT0.Add(time.Second))
		cacheCreate(t, repo, dead, cacheT0)
		return repo
	}
	now := cacheT0.Add(time.Hour)
	check := func(t *testing.T, repo ports.CacheRepository, n qnode, keys []qsort, owner string) {
		t.Helper()
		want := oracleIDs(t, recs, n, keys)
		if owner != "" {
			want = slices.DeleteFunc(want, func(id string) bool {
				return !slices.ContainsFunc(seed, func(e domain.Entry) bool { return e.ID == id && e.AssigneeID == owner })
			})
		}
		res, err := ListAll(t.Context(), repo, ports.ListQuery{Owner: owner, Filter: domainFilter(t, n),
			Sort: domainSort(t, keys), Limit: 1000, CountTotal: true}, now)
		if err != nil {
			t.Errorf("%s sorted %v: %v", n, keys, err)
			return
		}
		if got := cacheIDs(res.Entries); !slices.Equal(got, want) {
			t.Errorf("%s sorted %v:\n got %s\nwant %s", n, keys, queryKeysOf(seed, got), queryKeysOf(seed, want))
		}
		if res.Total != len(want) {
			t.Errorf("%s: total %d, want %d", n, res.Total, len(want))
		}
	}

	t.Run("every operator on every field answers what the contract's evaluator computes", func(t *testing.T) {
		t.Parallel()
		repo := setup(t)
		for _, n := range queryGenerated(seed) {
			check(t, repo, n, nil, "")
		}
	})

	t.Run("LIKE metacharacters match literally, L forms fold unicode on both sides, NULL expiry, nesting", func(t *testing.T) {
		t.Parallel()
		repo := setup(t)
		for _, n := range queryHand {
			check(t, repo, n, nil, "")
		}
		// The oracle agrees with what a reader of the contract expects.
		for _, c := range []struct {
			n    qnode
			want []string
		}{
			{qc("key", "$eqL", "ÄPFEL"), []string{"ÄPFEL", "äpfel"}},
			{qc("key", "$eq", "ÄPFEL"), []string{"ÄPFEL"}},
			{qc("key", "$cont", "%"), []string{"a%b", "100%", "x_%"}},
			{qc("key", "$starts", "a_"), []string{"a_b"}},
			{qc("key", "$cont", `\`), []string{`a\b`}},
		} {
			got := strings.Fields(queryKeysOf(seed, oracleIDs(t, recs, c.n, []qsort{{field: "key"}})))
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				t.Errorf("oracle %s = %v, want %v", c.n, got, c.want)
			}
		}
	})

	t.Run("lists sort on every field and several keys, ties broken by id ascending", func(t *testing.T) {
		t.Parallel()
		repo := setup(t)
		for _, keys := range querySorts {
			check(t, repo, qand(), keys, "")
			check(t, repo, qc("version", "$gte", "2"), keys, "")
		}
	})

	t.Run("pages of a sorted list concatenate to the whole list", func(t *testing.T) {
		t.Parallel()
		repo := setup(t)
		for _, keys := range querySorts {
			want := oracleIDs(t, recs, qand(), keys)
			var got []string
			for off := 0; off < len(want)+3; off += 4 {
				res, err := ListAll(t.Context(), repo, ports.ListQuery{Sort: domainSort(t, keys), Limit: 4, Offset: off}, now)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, cacheIDs(res.Entries)...)
			}
			if !slices.Equal(got, want) {
				t.Errorf("pages sorted %v:\n got %s\nwant %s", keys, queryKeysOf(seed, got), queryKeysOf(seed, want))
			}
		}
	})

	t.Run("the owner confinement holds whatever the filter ORs or negates", func(t *testing.T) {
		t.Parallel()
		repo := setup(t)
		me, other := cacheAssignee(1), cacheAssignee(2)
		for _, n := range []qnode{
			qand(),
			qc("assignee.id", "$eq", other),
			qc("assignee.id", "$ne", me),
			qc("assignee.id", "$in", me, other),
			qc("assignee.id", "$notin", me),
			qor(qc("assignee.id", "$eq", other), qc("key", "$cont", "")),
			qor(qand(), qc("assignee.id", "$eq", other)),
			qor(qc("key", "$eq", "k"), qc("key", "$ne", "k")),
		} {
			check(t, repo, n, nil, me)
		}
	})
}

// queryKeysOf returns the keys of the entries with ids, for messages.
func queryKeysOf(seed []domain.Entry, ids []string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		i := slices.IndexFunc(seed, func(e domain.Entry) bool { return e.ID == id })
		if i < 0 {
			out = append(out, id)
			continue
		}
		out = append(out, seed[i].Key)
	}
	return strings.Join(out, " ")
}
