package web

import (
	"strconv"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// The CRUD query language's conditions and sort keys (docs/api.md,
// "Listing: the query language"), on the fields of the cache entries or
// of the users alike.

// Combine applies the CRUD rules to filter and or conditions: filters are
// ANDed; ors alone are ORed; both give (filters ANDed) OR (ors ANDed),
// which for one of each is filter OR or.
func Combine(filters, ors []domain.Filter) domain.Filter {
	and := func(fs []domain.Filter) domain.Filter {
		if len(fs) == 1 {
			return fs[0]
		}
		return domain.AllOf(fs...)
	}
	switch {
	case len(filters) == 0 && len(ors) == 0:
		return domain.Filter{}
	case len(ors) == 0:
		return and(filters)
	case len(filters) == 0:
		if len(ors) == 1 {
			return ors[0]
		}
		return domain.AnyOf(ors...)
	}
	return domain.AnyOf(and(filters), and(ors))
}

// ParseCondition parses <field>||<op>[||<value>] on a field of set; where
// is "filter" or "or".
func ParseCondition(set domain.FieldSet, where, s string) (domain.Condition, error) {
	name, rest, ok := strings.Cut(s, "||")
	if !ok {
		return domain.Condition{}, domain.InvalidField(where, strconv.Quote(Clip(s))+" is not <field>||<operator>||<value>")
	}
	opName, value, hasValue := strings.Cut(rest, "||")
	field, err := set.Field(where, name)
	if err != nil {
		return domain.Condition{}, err
	}
	op, fold, err := domain.ParseQueryOp(where, opName)
	if err != nil {
		return domain.Condition{}, err
	}
	var values []string
	switch op {
	case domain.OpIsNull, domain.OpNotNull:
	case domain.OpIn, domain.OpNotIn, domain.OpBetween:
		if hasValue {
			values = strings.Split(value, ",")
		}
	default:
		if hasValue {
			values = []string{value}
		}
	}
	return set.Condition(where, field, op, fold, values)
}

// ParseSort parses <field>[,ASC|DESC] on a field of set.
func ParseSort(set domain.FieldSet, s string) (domain.SortKey, error) {
	name, dir, _ := strings.Cut(s, ",")
	f, err := set.Field("sort", name)
	if err != nil {
		return domain.SortKey{}, err
	}
	k := domain.SortKey{Field: f}
	switch {
	case dir == "" || strings.EqualFold(dir, "ASC"):
	case strings.EqualFold(dir, "DESC"):
		k.Desc = true
	default:
		return domain.SortKey{}, domain.InvalidField("sort", "direction must be ASC or DESC")
	}
	return k, nil
}
