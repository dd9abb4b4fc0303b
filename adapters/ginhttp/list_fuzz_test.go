package ginhttp

import (
	"slices"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

// FuzzListQuery feeds the list endpoint's query parser arbitrary query
// strings: it never panics, refuses with a validation error only, and
// whatever it accepts stays within the page limits.
func FuzzListQuery(f *testing.F) {
	for _, q := range []string{"", "limit=10&page=2", "filter=key||$eq||a&filter=type||$eq||b", "sort=key,DESC",
		"offset=5&limit=1000", "assignee.id=x&key=%00", "page=0", "limit=-1", "sort=nope", "filter=key||$ne||a", "%zz", "cache=1"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := toListInput(raw, 100, 1000)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("%q: a refusal of kind %v, want invalid", raw, domain.KindOf(err))
			}
			return
		}
		if q.in.Limit < 1 || q.in.Limit > 1000 || q.in.Offset < 0 || q.page < 1 {
			t.Fatalf("%q accepted with limit %d offset %d page %d", raw, q.in.Limit, q.in.Offset, q.page)
		}
	})
}

// FuzzUserListQuery feeds the user list's query, the same parser on the
// user fields, arbitrary query strings: it never panics, refuses with a
// validation error only, and what it accepts stays within the page
// limits and the user fields.
func FuzzUserListQuery(f *testing.F) {
	for _, q := range []string{"", "limit=10&page=2", "filter=username||$contL||a&or=admin||$eq||true", "sort=dateCreated,DESC",
		"filter=active||$in||true,false", "filter=active||$gt||true", "filter=key||$eq||a", "sort=username&sort=id", "%zz",
		"filter=dateCreated||$between||2030-01-02T00:00:00Z,2030-01-03T00:00:00%2B01:00", "filter=id||$isnull"} {
		f.Add(q)
	}
	fields := domain.UserFields.Fields()
	f.Fuzz(func(t *testing.T, raw string) {
		q, page, err := parseUserQuery(raw)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("%q: a refusal of kind %v, want invalid", raw, domain.KindOf(err))
			}
			return
		}
		if q.Limit < 1 || q.Limit > maxAdminPage || q.Offset < 0 || page < 1 {
			t.Fatalf("%q accepted with limit %d offset %d page %d", raw, q.Limit, q.Offset, page)
		}
		var walk func(domain.Filter)
		walk = func(f domain.Filter) {
			if f.Kind == domain.FilterCond && !slices.Contains(fields, f.Cond.Field) {
				t.Fatalf("%q accepted a condition on %v, not a user field", raw, f.Cond.Field)
			}
			for _, s := range f.Subs {
				walk(s)
			}
		}
		walk(q.Filter)
	})
}
