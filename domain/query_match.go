package domain

import (
	"cmp"
	"slices"
	"strings"
)

// The list query language evaluated in Go, giving the answers the SQL
// stores give by the rules of Filter: strings compared byte by byte, L
// operators on FoldCase of both sides.

// FieldValues gives a listed item's value of a field, and false when it
// has none.
type FieldValues func(QueryField) (QueryValue, bool)

// Match reports whether the item whose values are v satisfies f.
func (f Filter) Match(v FieldValues) bool {
	switch f.Kind {
	case FilterCond:
		return f.Cond.match(v)
	case FilterAny:
		return slices.ContainsFunc(f.Subs, func(s Filter) bool { return s.Match(v) })
	default:
		return !slices.ContainsFunc(f.Subs, func(s Filter) bool { return !s.Match(v) })
	}
}

// CompareValues orders a and b as values of kind.
func CompareValues(kind FieldKind, a, b QueryValue) int {
	switch kind {
	case KindInteger:
		return cmp.Compare(a.Int, b.Int)
	case KindTime:
		return a.Time.Compare(b.Time)
	}
	return strings.Compare(a.Text, b.Text)
}

// CompareBy orders the items whose values are a and b by keys; an item
// without a value sorts after every item with one. Lists end the order
// with their id.
func CompareBy(keys []SortKey, a, b FieldValues) int {
	for _, k := range keys {
		va, oka := a(k.Field)
		vb, okb := b(k.Field)
		var c int
		switch {
		case !oka && !okb:
		case !oka:
			c = 1
		case !okb:
			c = -1
		default:
			c = CompareValues(k.Field.Kind(), va, vb)
		}
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (c *Condition) match(values FieldValues) bool {
	v, ok := values(c.Field)
	switch c.Op {
	case OpIsNull:
		return !ok
	case OpNotNull:
		return ok
	}
	if !ok {
		return false
	}
	kind := c.Field.Kind()
	fold := func(s string) string {
		if c.Fold {
			return FoldCase(s)
		}
		return s
	}
	text := fold(v.Text)
	first := func() string { return fold(c.Values[0].Text) }
	switch c.Op {
	case OpStarts:
		return strings.HasPrefix(text, first())
	case OpEnds:
		return strings.HasSuffix(text, first())
	case OpCont:
		return strings.Contains(text, first())
	case OpExcl:
		return !strings.Contains(text, first())
	}
	if kind == KindText {
		v.Text = text
	}
	at := func(i int) QueryValue {
		w := c.Values[i]
		if kind == KindText {
			w.Text = fold(w.Text)
		}
		return w
	}
	switch c.Op {
	case OpEq:
		return CompareValues(kind, v, at(0)) == 0
	case OpNe:
		return CompareValues(kind, v, at(0)) != 0
	case OpGt:
		return CompareValues(kind, v, at(0)) > 0
	case OpLt:
		return CompareValues(kind, v, at(0)) < 0
	case OpGte:
		return CompareValues(kind, v, at(0)) >= 0
	case OpLte:
		return CompareValues(kind, v, at(0)) <= 0
	case OpBetween:
		return CompareValues(kind, v, at(0)) >= 0 && CompareValues(kind, v, at(1)) <= 0
	case OpIn, OpNotIn:
		in := false
		for i := range c.Values {
			if CompareValues(kind, v, at(i)) == 0 {
				in = true
				break
			}
		}
		return in == (c.Op == OpIn)
	}
	return false
}
