package admin

import (
	"slices"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

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
