package contract

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// listOf GETs the list with query (starting with "?") and returns its
// entries; the answer must be a bare array.
func (s *webSuite) listOf(t *testing.T, query string) []webEntry {
	t.Helper()
	r := s.do(t, http.MethodGet, s.coll()+query, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s answered %d: %s", query, r.Status, webShort(r.Body))
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatalf("GET %s: not a JSON array: %v: %s", query, err, webShort(r.Body))
	}
	out := make([]webEntry, len(raw))
	for i, b := range raw {
		out[i] = webParseEntry(t, b)
	}
	return out
}

// webPage is the paged list answer.
type webPage struct {
	Data      []json.RawMessage `json:"data"`
	Count     int               `json:"count"`
	Total     int               `json:"total"`
	Page      int               `json:"page"`
	PageCount int               `json:"pageCount"`
}

func (s *webSuite) pageOf(t *testing.T, query string) (webPage, []string) {
	t.Helper()
	r := s.do(t, http.MethodGet, s.coll()+query, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s answered %d: %s", query, r.Status, webShort(r.Body))
	}
	var p webPage
	if err := json.Unmarshal(r.Body, &p); err != nil || p.Data == nil {
		t.Fatalf("GET %s: not a page object (%v): %s", query, err, webShort(r.Body))
	}
	keys := make([]string, len(p.Data))
	for i, b := range p.Data {
		keys[i] = webParseEntry(t, b).Key
	}
	return p, keys
}

func webKeys(es []webEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Key
	}
	return out
}

func webListTests(t *testing.T, s *webSuite) {
	// seed creates entries b, a, c (in that order, at increasing times)
	// for a fresh assignee, types x, y, x.
	seed := func(t *testing.T) string {
		t.Helper()
		who := webUUID()
		for _, kt := range [][2]string{{"b", "x"}, {"a", "y"}, {"c", "x"}} {
			s.create(t, kt[0], kt[1], who, `1`, `null`)
			s.pause(5 * time.Millisecond)
		}
		return who
	}

	t.Run("lists filter by key, type and assignee.id in both forms", func(t *testing.T) {
		t.Parallel()
		who := seed(t)
		for query, want := range map[string][]string{
			"?assignee.id=" + who:                                       {"b", "a", "c"},
			"?assignee.id=" + who + "&key=a":                            {"a"},
			"?assignee.id=" + who + "&type=x":                           {"b", "c"},
			"?filter=assignee.id||$eq||" + who + "&filter=type||$eq||x": {"b", "c"},
			"?filter=assignee.id||$eq||" + who + "&filter=key||$eq||c":  {"c"},
			"?assignee.id=" + who + "&filter=key||$eq||a&key=a":         {"a"},
			"?assignee.id=" + who + "&key=a&filter=key||$eq||b":         {},
			"?assignee.id=" + who + "&key=zzz":                          {},
			"?assignee.id=" + strings.ToUpper(who) + "&key=b":           {"b"},
			"?assignee.id=" + webUUID():                                 {},
		} {
			if got := webKeys(s.listOf(t, query)); !slices.Equal(got, want) {
				t.Errorf("GET %s: keys %v, want %v", query, got, want)
			}
		}
	})

	t.Run("the collection with a trailing slash answers as without it", func(t *testing.T) {
		t.Parallel()
		who := seed(t)
		// As Rockets' specs call it: GET /cache/<a>/?filter[0]=….
		query := "?filter[0]=assignee.id||$eq||" + who + "&filter[1]=type||$eq||x"
		r := s.do(t, http.MethodGet, s.coll()+"/"+query, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s/%s answered %d (a redirect or a 404 is wrong): %s", s.coll(), query, r.Status, webShort(r.Body))
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(r.Body, &raw); err != nil {
			t.Fatalf("not a JSON array: %v: %s", err, webShort(r.Body))
		}
		var got []string
		for _, b := range raw {
			got = append(got, webParseEntry(t, b).Key)
		}
		if want := webKeys(s.listOf(t, query)); !slices.Equal(got, want) || len(want) != 2 {
			t.Errorf("with the slash: keys %v; without: %v (want 2 keys each)", got, want)
		}
		created := s.do(t, http.MethodPost, s.coll()+"/", webBody("slash", "x", who, `1`, `null`))
		e := created.entry(t, http.StatusCreated)
		if loc := created.Header.Get("Location"); !strings.HasSuffix(loc, s.item(e.ID)) {
			t.Errorf("POST %s/: Location %q, want one ending in %s", s.coll(), loc, s.item(e.ID))
		}
	})

	t.Run("lists sort by the given field and direction", func(t *testing.T) {
		t.Parallel()
		who := seed(t)
		for sort, want := range map[string][]string{
			"key,ASC":          {"a", "b", "c"},
			"key,DESC":         {"c", "b", "a"},
			"key,desc":         {"c", "b", "a"},
			"dateCreated,ASC":  {"b", "a", "c"},
			"dateCreated,DESC": {"c", "a", "b"},
			"dateUpdated,DESC": {"c", "a", "b"},
			"type,DESC":        {"a"},
		} {
			got := webKeys(s.listOf(t, "?assignee.id="+who+"&sort="+sort))
			if sort == "type,DESC" {
				got = got[:1] // the order among equal types is not pinned
			}
			if !slices.Equal(got, want) {
				t.Errorf("sort=%s: keys %v, want %v", sort, got, want)
			}
		}
	})

	t.Run("limit trims the array; page and offset give the paged object", func(t *testing.T) {
		t.Parallel()
		who := seed(t)
		if got := webKeys(s.listOf(t, "?assignee.id="+who+"&sort=key,ASC&limit=2")); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("limit=2: %v", got)
		}
		for query, want := range map[string]struct {
			keys                      []string
			count, total, page, pages int
		}{
			"&limit=2&page=1":   {[]string{"a", "b"}, 2, 3, 1, 2},
			"&limit=2&page=2":   {[]string{"c"}, 1, 3, 2, 2},
			"&limit=2&page=3":   {[]string{}, 0, 3, 3, 2},
			"&limit=2&offset=1": {[]string{"b", "c"}, 2, 3, 1, 2},
			"&limit=1&offset=2": {[]string{"c"}, 1, 3, 3, 3},
			"&offset=0":         {[]string{"a", "b", "c"}, 3, 3, 1, 1},
			"&page=1":           {[]string{"a", "b", "c"}, 3, 3, 1, 1},
		} {
			p, keys := s.pageOf(t, "?assignee.id="+who+"&sort=key,ASC"+query)
			if !slices.Equal(keys, want.keys) || p.Count != want.count || p.Total != want.total ||
				p.Page != want.page || p.PageCount != want.pages {
				t.Errorf("%s: keys %v count %d total %d page %d pageCount %d, want %v %d %d %d %d", query,
					keys, p.Count, p.Total, p.Page, p.PageCount, want.keys, want.count, want.total, want.page, want.pages)
			}
		}
		p, _ := s.pageOf(t, "?assignee.id="+webUUID()+"&page=1")
		if p.Count != 0 || p.Total != 0 || p.PageCount != 0 {
			t.Errorf("an empty page: %+v", p)
		}
	})

	t.Run("bad list parameters are 400s naming the parameter", func(t *testing.T) {
		t.Parallel()
		for query, field := range map[string]string{
			"?limit=0": "limit", "?limit=1001": "limit", "?limit=abc": "limit", "?limit=-1": "limit",
			"?limit=99999999999999999999": "limit", "?page=0": "page", "?page=x": "page", "?offset=-1": "offset",
			"?offset=1.5": "offset", "?sort=bogus,ASC": "sort", "?sort=key,UP": "sort", "?sort=data,ASC": "sort",
			"?filter=data||$eq||x": "filter", "?filter=key||$nope||x": "filter",
			"?filter[]=version||$gt||x": "filter", "?or=dateCreated||$gte||yesterday": "or", "?filter=key||$gtL||a": "filter",
			"?filter=version||$cont||1": "filter", "?s=[1]": "s", "?s={\"key\":": "s", "?s={\"$or\":[]}": "s",
			"?s={\"data\":1}": "s", "?s={\"version\":\"x\"}": "s", "?fields=key,nope": "fields", "?select=bogus": "select",
			"?join=profile": "join", "?join[]=profile": "join", "?per_page=0": "per_page", "?limit=1&per_page=1": "per_page",
			"?filter=key||$between||a": "filter", "?filter=key||$in": "filter", "?filter[x]=key||$eq||a": "filter[x]", "?filter=key": "filter",
			"?filter=key||$eq": "filter", "?kye=a": "kye", "?page=1&offset=0": "page",
		} {
			s.do(t, http.MethodGet, s.coll()+query, nil).fail(t, http.StatusBadRequest, "", field)
		}
		s.listOf(t, "?limit=1000&assignee.id="+webUUID())
		s.listOf(t, "?limit=1&assignee.id="+webUUID())
	})
}
