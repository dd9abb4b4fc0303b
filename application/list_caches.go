package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// List limits.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ListCachesInput selects live entries of one assignment: those matching
// Filter and the optional Key, Type and AssigneeID (each an exact match,
// ANDed with Filter). The access policy is applied on top of all of it.
type ListCachesInput struct {
	Assignment string
	Actor      domain.Actor
	Key        string
	Type       string
	AssigneeID string
	Filter     domain.Filter
	// Sort orders the list; id ascending breaks every tie. Empty sorts by
	// dateCreated.
	Sort []domain.SortKey
	// Limit is 1..the configured maximum (MaxListLimit unless set); zero
	// means the configured default.
	Limit      int
	Offset     int
	CountTotal bool
}

// ListCachesOutput is one page of entries.
type ListCachesOutput struct {
	// Total counts every match when the input asked for it.
	Total int
	Limit int
}

// ListCaches lists entries; an owner-policy caller sees only its own.
type ListCaches struct{ deps CacheConfig }

// Limits returns the default and the largest page size.
func (uc *ListCaches) Limits() (def, max int) { return uc.deps.ListDefault, uc.deps.ListMax }

// Stream calls yield with each entry of the matching page, in order, as
// the store produces it, so a page is never held whole in memory. Every
// check (assignment, access, limits, filter) is made before the first
// entry; an error from yield stops the list and is returned wrapped.
func (uc *ListCaches) Stream(ctx context.Context, in ListCachesInput, yield func(domain.Entry) error) (ListCachesOutput, error) {
	return traced(ctx, uc.deps.Tracer, "ListCaches", uc, streamCall{in, yield}, (*ListCaches).stream)
}

// streamCall is Stream's two arguments as traced's one.
type streamCall struct {
	in    ListCachesInput
	yield func(domain.Entry) error
}

func (uc *ListCaches) stream(ctx context.Context, c streamCall) (ListCachesOutput, error) {
	in := c.in
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return ListCachesOutput{}, err
	}
	switch {
	case in.Limit == 0:
		in.Limit = uc.deps.ListDefault
	case in.Limit < 1 || in.Limit > uc.deps.ListMax:
		return ListCachesOutput{}, domain.InvalidField("limit", fmt.Sprintf("must be between 1 and %d", uc.deps.ListMax))
	}
	if in.Offset < 0 {
		return ListCachesOutput{}, domain.InvalidField("offset", "must not be negative")
	}
	filter, err := listFilter(in)
	if err != nil {
		return ListCachesOutput{}, err
	}
	q := ports.ListQuery{Filter: filter, Sort: in.Sort, Limit: in.Limit, Offset: in.Offset, CountTotal: in.CountTotal,
		Owner: ownerFilter(in.Actor, st)}
	res, err := repo.List(ctx, q, now, c.yield)
	if err != nil {
		return ListCachesOutput{}, fmt.Errorf("list cache entries: %w", err)
	}
	return ListCachesOutput{Total: res.Total, Limit: in.Limit}, nil
}

// listFilter ANDs the input's exact-match fields with its filter and
// checks the limits.
func listFilter(in ListCachesInput) (domain.Filter, error) {
	var all []domain.Filter
	for _, f := range []struct {
		field domain.QueryField
		v     string
	}{{domain.FieldKey, in.Key}, {domain.FieldType, in.Type}, {domain.FieldAssigneeID, strings.ToLower(in.AssigneeID)}} {
		if f.v == "" {
			continue
		}
		c, err := domain.NewCondition(f.field.String(), f.field, domain.OpEq, false, []string{f.v})
		if err != nil {
			return domain.Filter{}, err
		}
		all = append(all, domain.Where(c))
	}
	f := in.Filter
	if len(all) > 0 {
		if !f.IsAll() {
			all = append(all, f)
		}
		f = domain.AllOf(all...)
	}
	if err := domain.ValidateFilter("filter", f); err != nil {
		return domain.Filter{}, err
	}
	for _, k := range in.Sort {
		if k.Field.String() == "" {
			return domain.Filter{}, domain.InvalidField("sort", "unknown field")
		}
	}
	return f, nil
}
