package memstore

import (
	"cmp"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// The list query language evaluated in Go: the same answers the SQL
// stores give, by the rules of domain.Filter (strings compared byte by
// byte, L operators on domain.FoldCase of both sides, no value for a
// NULL expirationDate but under $isnull).

// matches reports whether e satisfies f.
func matches(f domain.Filter, e *domain.Entry) bool {
	switch f.Kind {
	case domain.FilterCond:
		return matchCond(&f.Cond, e)
	case domain.FilterAny:
		for _, s := range f.Subs {
			if matches(s, e) {
				return true
			}
		}
		return false
	default:
		for _, s := range f.Subs {
			if !matches(s, e) {
				return false
			}
		}
		return true
	}
}

// fieldValue returns e's value of field, and false when it has none.
func fieldValue(field domain.QueryField, e *domain.Entry) (domain.QueryValue, bool) {
	switch field {
	case domain.FieldID:
		return domain.QueryValue{Text: e.ID}, true
	case domain.FieldKey:
		return domain.QueryValue{Text: e.Key}, true
	case domain.FieldType:
		return domain.QueryValue{Text: e.Type}, true
	case domain.FieldAssigneeID:
		return domain.QueryValue{Text: e.AssigneeID}, true
	case domain.FieldVersion:
		return domain.QueryValue{Int: int64(e.Version)}, true
	case domain.FieldDateCreated:
		return domain.QueryValue{Time: e.DateCreated}, true
	case domain.FieldDateUpdated:
		return domain.QueryValue{Time: e.DateUpdated}, true
	case domain.FieldExpirationDate:
		if e.ExpiresAt == nil {
			return domain.QueryValue{}, false
		}
		return domain.QueryValue{Time: *e.ExpiresAt}, true
	}
	return domain.QueryValue{}, false
}

// compareValues orders a and b as values of kind.
func compareValues(kind domain.FieldKind, a, b domain.QueryValue) int {
	switch kind {
	case domain.KindInteger:
		return cmp.Compare(a.Int, b.Int)
	case domain.KindTime:
		return a.Time.Compare(b.Time)
	}
	return strings.Compare(a.Text, b.Text)
}

func matchCond(c *domain.Condition, e *domain.Entry) bool {
	v, ok := fieldValue(c.Field, e)
	switch c.Op {
	case domain.OpIsNull:
		return !ok
	case domain.OpNotNull:
		return ok
	}
	if !ok {
		return false
	}
	kind := c.Field.Kind()
	fold := func(s string) string {
		if c.Fold {
			return domain.FoldCase(s)
		}
		return s
	}
	text := fold(v.Text)
	first := func() string { return fold(c.Values[0].Text) }
	switch c.Op {
	case domain.OpStarts:
		return strings.HasPrefix(text, first())
	case domain.OpEnds:
		return strings.HasSuffix(text, first())
	case domain.OpCont:
		return strings.Contains(text, first())
	case domain.OpExcl:
		return !strings.Contains(text, first())
	}
	if kind == domain.KindText {
		v.Text = text
	}
	at := func(i int) domain.QueryValue {
		w := c.Values[i]
		if kind == domain.KindText {
			w.Text = fold(w.Text)
		}
		return w
	}
	switch c.Op {
	case domain.OpEq:
		return compareValues(kind, v, at(0)) == 0
	case domain.OpNe:
		return compareValues(kind, v, at(0)) != 0
	case domain.OpGt:
		return compareValues(kind, v, at(0)) > 0
	case domain.OpLt:
		return compareValues(kind, v, at(0)) < 0
	case domain.OpGte:
		return compareValues(kind, v, at(0)) >= 0
	case domain.OpLte:
		return compareValues(kind, v, at(0)) <= 0
	case domain.OpBetween:
		return compareValues(kind, v, at(0)) >= 0 && compareValues(kind, v, at(1)) <= 0
	case domain.OpIn, domain.OpNotIn:
		in := false
		for i := range c.Values {
			if compareValues(kind, v, at(i)) == 0 {
				in = true
				break
			}
		}
		return in == (c.Op == domain.OpIn)
	}
	return false
}

// compareBy orders a and b by keys, then by id ascending. A missing
// expirationDate sorts after every date.
func compareBy(keys []domain.SortKey, a, b *domain.Entry) int {
	for _, k := range keys {
		va, oka := fieldValue(k.Field, a)
		vb, okb := fieldValue(k.Field, b)
		var c int
		switch {
		case !oka && !okb:
		case !oka:
			c = 1
		case !okb:
			c = -1
		default:
			c = compareValues(k.Field.Kind(), va, vb)
		}
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return strings.Compare(a.ID, b.ID)
}

// defaultSort is the order of a list that names none.
var defaultSort = []domain.SortKey{{Field: domain.FieldDateCreated}}
