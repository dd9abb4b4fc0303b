package application

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// UserList selects a page of users: those Filter matches (on
// domain.UserFields), ordered by Sort (default username, then id
// ascending), Limit of them (0: every one) after Offset.
type UserList struct {
	Filter        domain.Filter
	Sort          []domain.SortKey
	Limit, Offset int
}

// List returns the page of users q selects and how many match;
// domain.ErrNotImplemented when the user store cannot list. It filters
// here with domain.Filter.Match rather than in SQL: users are few, and one
// evaluator cannot disagree with itself as a translation per store could.
func (a *Users) List(ctx context.Context, q UserList) ([]domain.User, int, error) {
	all, err := a.All(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []domain.User
	for _, u := range all {
		if q.Filter.Match(userValues(u, false)) {
			out = append(out, u)
		}
	}
	keys := q.Sort
	if len(keys) == 0 {
		keys = []domain.SortKey{{Field: domain.FieldUsername}}
	}
	slices.SortStableFunc(out, func(x, y domain.User) int {
		return cmp.Or(domain.CompareBy(keys, userValues(x, true), userValues(y, true)), strings.Compare(x.ID, y.ID))
	})
	total := len(out)
	out = out[min(q.Offset, len(out)):]
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total, nil
}

// userValues returns u's values of domain.UserFields; sorting, the
// username orders as its normalized form, as the store keeps usernames
// unique.
func userValues(u domain.User, sorting bool) domain.FieldValues {
	return func(f domain.QueryField) (domain.QueryValue, bool) {
		switch f {
		case domain.FieldID:
			return domain.QueryValue{Text: u.ID}, true
		case domain.FieldUsername:
			if sorting {
				return domain.QueryValue{Text: domain.NormalizeUsername(u.Username)}, true
			}
			return domain.QueryValue{Text: u.Username}, true
		case domain.FieldActive:
			return domain.QueryValue{Text: strconv.FormatBool(u.Active)}, true
		case domain.FieldAdmin:
			return domain.QueryValue{Text: strconv.FormatBool(u.Admin)}, true
		case domain.FieldDateCreated:
			return domain.QueryValue{Time: u.DateCreated}, true
		case domain.FieldDateUpdated:
			return domain.QueryValue{Time: u.DateUpdated}, true
		}
		return domain.QueryValue{}, false
	}
}

// HasAdmin reports whether an active admin exists, so that serve can say
// how the first one is made when none does (README.md, "Web console");
// domain.ErrNotImplemented when the user store cannot list.
func (a *Users) HasAdmin(ctx context.Context) (bool, error) {
	var q UserList
	for _, f := range []domain.QueryField{domain.FieldAdmin, domain.FieldActive} {
		c, err := domain.UserFields.Condition("admin", f, domain.OpEq, false, []string{"true"})
		if err != nil {
			return false, err
		}
		q.Filter.Subs = append(q.Filter.Subs, domain.Where(c))
	}
	q.Limit = 1
	page, _, err := a.List(ctx, q)
	return len(page) > 0, err
}
