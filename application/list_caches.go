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

// ListCachesInput selects live entries of one assignment. Empty filters
// match everything.
type ListCachesInput struct {
	Assignment string
	Actor      domain.Actor
	Key        string
	Type       string
	AssigneeID string
	Sort       ports.SortField
	Desc       bool
	// Limit is 1..the configured maximum (MaxListLimit unless set); zero
	// means the configured default.
	Limit      int
	Offset     int
	CountTotal bool
}

// ListCachesOutput is one page of entries.
type ListCachesOutput struct {
	Entries []domain.Entry
	// Total counts every match when the input asked for it.
	Total int
	Limit int
}

// ListCaches lists entries; an owner-policy caller sees only its own.
type ListCaches struct{ deps CacheConfig }

// NewListCaches returns the use case.
func NewListCaches(d CacheConfig) (*ListCaches, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	return &ListCaches{deps: d}, nil
}

// Limits returns the default and the largest page size.
func (uc *ListCaches) Limits() (def, max int) { return uc.deps.ListDefault, uc.deps.ListMax }

// Execute returns the matching page.
func (uc *ListCaches) Execute(ctx context.Context, in ListCachesInput) (ListCachesOutput, error) {
	st, now, err := uc.deps.open(in.Assignment, in.Actor)
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
	q := ports.ListQuery{Key: in.Key, Type: in.Type, AssigneeID: strings.ToLower(in.AssigneeID),
		Sort: in.Sort, Desc: in.Desc, Limit: in.Limit, Offset: in.Offset, CountTotal: in.CountTotal}
	if owner := ownerFilter(in.Actor, st); owner != "" {
		if q.AssigneeID != "" && q.AssigneeID != owner {
			return ListCachesOutput{Entries: []domain.Entry{}, Limit: in.Limit}, nil
		}
		q.AssigneeID = owner
	}
	res, err := st.Repo.List(ctx, q, now)
	if err != nil {
		return ListCachesOutput{}, fmt.Errorf("list cache entries: %w", err)
	}
	if res.Entries == nil {
		res.Entries = []domain.Entry{}
	}
	return ListCachesOutput{Entries: res.Entries, Total: res.Total, Limit: in.Limit}, nil
}
