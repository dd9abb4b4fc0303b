package ginhttp

import (
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
