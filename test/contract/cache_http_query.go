package contract

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// webQueryTests: the CRUD query language over HTTP (docs/api.md,
// "Listing: the query language"): the syntaxes (filter, or, their array forms, s), the combination
// rules, sort, per_page, fields and cache. Each row states, as a tree the
// test's own evaluator runs, what the query must mean.
func webQueryTests(t *testing.T, s *webSuite) {
	t.Run("filter, or, s and their array forms combine as the contract says", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		for i, k := range []string{"ÄPFEL", "äpfel", "a%b", "a_b", "x", "Apfel"} {
			exp := `null`
			if i%2 == 1 {
				exp = `"1h"`
			}
			e := s.create(t, k, []string{"t1", "T1", "note"}[i%3], who, `1`, exp)
			for range i % 3 {
				s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data":2}`)).entry(t, http.StatusOK)
			}
		}
		var recs []qrec
		for _, e := range s.listOf(t, "?assignee.id="+who) {
			r := qrec{id: e.ID, key: e.Key, typ: e.Type, assignee: e.Assignee.ID, version: int64(e.Version),
				created: webTime(t, e.DateCreated), updated: webTime(t, e.DateUpdated)}
			if e.ExpirationDate != nil {
				x := webTime(t, *e.ExpirationDate)
				r.expires = &x
			}
			recs = append(recs, r)
		}
		if len(recs) != 6 {
			t.Fatalf("seeded %d entries, want 6", len(recs))
		}
		esc := url.QueryEscape
		F1, F2 := qc("key", "$contL", "a"), qc("type", "$eq", "t1")
		O1, O2 := qc("type", "$eq", "note"), qc("key", "$eq", "x")
		for _, c := range []struct {
			query string
			want  qnode
			sort  []qsort
		}{
			{"filter=key||$contL||a", F1, nil},
			{"filter=key||$contL||a&filter=type||$eq||t1", qand(F1, F2), nil},
			{"filter=key||$contL||a&or=type||$eq||note", qor(F1, O1), nil},
			{"filter=key||$contL||a&filter=type||$eq||t1&or=type||$eq||note", qor(qand(F1, F2), O1), nil},
			{"filter=key||$contL||a&or=type||$eq||note&or=key||$eq||x", qor(F1, qand(O1, O2)), nil},
			{"filter=key||$contL||a&filter=type||$eq||t1&or=type||$eq||note&or=key||$eq||x", qor(qand(F1, F2), qand(O1, O2)), nil},
			{"or=type||$eq||note&or=key||$eq||x", qor(O1, O2), nil},
			{"or=type||$eq||note", O1, nil},
			{"filter[]=key||$contL||a&filter[]=type||$eq||t1&or[]=type||$eq||note", qor(qand(F1, F2), O1), nil},
			{"filter[0]=key||$contL||a&filter[1]=type||$eq||t1", qand(F1, F2), nil},
			{"filter=key||cont||a", qc("key", "$cont", "a"), nil},
			{"filter=key||$cont||%25", qc("key", "$cont", "%"), nil},
			{"filter=key||$cont||_", qc("key", "$cont", "_"), nil},
			{"filter=key||$eqL||" + esc("ÄPFEL"), qc("key", "$eqL", "äpfel"), nil},
			{"filter=key||$in||x,a_b", qc("key", "$in", "x", "a_b"), nil},
			{"filter=key||$notinL||X,APFEL", qc("key", "$notinL", "x", "apfel"), nil},
			{"filter=version||$between||2,3", qc("version", "$between", "2", "3"), nil},
			{"filter=expirationDate||$isnull", qc("expirationDate", "$isnull"), nil},
			{"filter=expirationDate||$notnull||", qc("expirationDate", "$notnull"), nil},
			{"s=" + esc(`{"key":"x"}`), O2, nil},
			{"s=" + esc(`{"key":{"$contL":"A"},"type":"t1"}`), qand(F1, F2), nil},
			{"s=" + esc(`{"$or":[{"type":"note"},{"key":"x"}]}`), qor(O1, O2), nil},
			{"s=" + esc(`{"$and":[{"$or":[{"type":"note"},{"key":"x"}]}],"key":{"$ne":"x"}}`), qand(qor(O1, O2), qc("key", "$ne", "x")), nil},
			{"s=" + esc(`{"version":{"$gt":1,"$lt":3}}`), qand(qc("version", "$gt", "1"), qc("version", "$lt", "3")), nil},
			{"s=" + esc(`{"key":{"$or":{"$eq":"x","$startsL":"ä"}}}`), qor(O2, qc("key", "$startsL", "ä")), nil},
			{"s=" + esc(`{"expirationDate":null}`), qc("expirationDate", "$isnull"), nil},
			{"s=" + esc(`{"key":{"$in":["x","a%b"]}}`) + "&filter=key||$eq||nothing&or=type||$eq||t1", qc("key", "$in", "x", "a%b"), nil},
			{"s=" + esc(`{}`), qand(), nil},
			{"sort=version,DESC&sort=key,ASC", qand(), []qsort{{field: "version", desc: true}, {field: "key"}}},
			{"sort[]=type,ASC&sort[]=version,DESC", qand(), []qsort{{field: "type"}, {field: "version", desc: true}}},
			{"sort=id,ASC&cache=1732000000", qand(), []qsort{{field: "id"}}},
		} {
			query := c.query
			if c.sort == nil {
				// Creation times come back to the millisecond only;
				// keys are unique.
				query += "&sort=key,ASC"
				c.sort = []qsort{{field: "key"}}
			}
			got := webIDs(s.listOf(t, "?assignee.id="+who+"&"+query))
			want := oracleIDs(t, recs, c.want, c.sort)
			if !slices.Equal(got, want) {
				t.Errorf("GET ?%s: %d entries %v, want %d %v (%s)", c.query, len(got), got, len(want), want, c.want)
			}
		}
	})

	t.Run("per_page pages, fields and select trim each entry to what is named and its id", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		for _, k := range []string{"a", "b", "c"} {
			s.create(t, k, "t", who, `{"big":"data"}`, `null`)
		}
		p, keys := s.pageOf(t, "?assignee.id="+who+"&sort=key,DESC&per_page=2&page=1")
		if !slices.Equal(keys, []string{"c", "b"}) || p.Total != 3 || p.PageCount != 2 {
			t.Errorf("per_page=2: keys %v total %d pageCount %d", keys, p.Total, p.PageCount)
		}
		// Every page the document admits is answered, however far past
		// the end (README.md, "Listing"): an empty page, the true total.
		for _, far := range []string{"&per_page=2&page=3", "&limit=1000&page=1073741824", "&offset=1073741824"} {
			p, keys := s.pageOf(t, "?assignee.id="+who+far)
			if len(keys) != 0 || p.Count != 0 || p.Total != 3 {
				t.Errorf("%s: keys %v count %d total %d, want an empty page of a total of 3", far, keys, p.Count, p.Total)
			}
		}
		for query, want := range map[string][]string{
			"fields=key":                         {"id", "key"},
			"select=key,type":                    {"id", "key", "type"},
			"fields[]=assignee&fields[]=version": {"assignee", "id", "version"},
			"fields=id":                          {"id"},
		} {
			r := s.do(t, http.MethodGet, s.coll()+"?assignee.id="+who+"&"+query, nil)
			var got []map[string]json.RawMessage
			if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil || len(got) != 3 {
				t.Fatalf("GET ?%s: %d %s", query, r.Status, webShort(r.Body))
			}
			for _, e := range got {
				var names []string
				for n := range e {
					names = append(names, n)
				}
				slices.Sort(names)
				if !slices.Equal(names, want) {
					t.Errorf("GET ?%s: members %v, want %v", query, names, want)
				}
			}
		}
	})

	t.Run("a bare list without limit holds up to listMax entries, a paged one the default page", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		for i := range 120 {
			s.create(t, "k"+strings.Repeat("x", i%7)+time.Duration(i).String(), "t", who, `1`, `null`)
		}
		if n := len(s.listOf(t, "?assignee.id="+who)); n != 120 {
			t.Errorf("a bare list holds %d entries, want all 120", n)
		}
		if p, _ := s.pageOf(t, "?assignee.id="+who+"&page=1"); p.Count != 100 || p.Total != 120 {
			t.Errorf("page 1 holds %d of %d, want 100 of 120", p.Count, p.Total)
		}
	})
}

func webIDs(es []webEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}
