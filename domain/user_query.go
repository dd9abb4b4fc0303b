package domain

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The fields the admin API's user list filters and sorts on
// (docs/admin.md): text (id, username), booleans (active, admin) and
// times (dateCreated, dateUpdated).
var userQueryFields = map[string]FieldKind{
	"id": KindText, "username": KindText, "active": kindBool, "admin": kindBool,
	"dateCreated": KindTime, "dateUpdated": KindTime,
}

// kindBool is the kind of the user fields active and admin; entries
// have no boolean field, so it is not among the entry kinds.
const kindBool FieldKind = 200

// UserCondition compares one user field with its values, in the CRUD
// query language of the cache lists (README.md, "Lists"): the same
// operators, L forms on text fields.
type UserCondition struct {
	Field  string
	Op     QueryOp
	Fold   bool
	Values []string
	times  []time.Time
}

// NewUserCondition checks a condition on a user field; where names it
// in errors. Booleans take "true" or "false" and the operators $eq, $ne,
// $in, $notin; times are RFC 3339; $isnull and $notnull match nothing and
// everything (no user field is null).
func NewUserCondition(where, field string, op QueryOp, fold bool, values []string) (UserCondition, error) {
	kind, ok := userQueryFields[field]
	if !ok {
		return UserCondition{}, InvalidField(where, "unknown field "+strconv.Quote(clipQuery(field))+
			"; use id, username, active, admin, dateCreated or dateUpdated")
	}
	c := UserCondition{Field: field, Op: op, Fold: fold, Values: values}
	if (op.textOnly() || fold) && kind != KindText {
		return UserCondition{}, InvalidField(where, op.String()+" applies to text fields only (id, username), not "+field)
	}
	if kind == kindBool && op != OpEq && op != OpNe && op != OpIn && op != OpNotIn && op != OpIsNull && op != OpNotNull {
		return UserCondition{}, InvalidField(where, field+" is true or false: use $eq, $ne, $in or $notin")
	}
	want := 1
	switch op {
	case OpIsNull, OpNotNull:
		c.Values, want = nil, 0
	case OpBetween:
		want = 2
	case OpIn, OpNotIn:
		want = max(1, len(values))
	}
	if len(c.Values) != want {
		return UserCondition{}, InvalidField(where, field+" "+op.String()+" needs "+strconv.Itoa(want)+" value(s)")
	}
	for _, v := range c.Values {
		switch kind {
		case kindBool:
			if v != "true" && v != "false" {
				return UserCondition{}, InvalidField(where, field+" takes true or false")
			}
		case KindTime:
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil || t.Year() < 1 || t.Year() > 9999 {
				return UserCondition{}, InvalidField(where, field+" takes an RFC 3339 time")
			}
			c.times = append(c.times, Normalize(t))
		}
	}
	return c, nil
}

// UserQuery selects and orders users for the admin API: a user matches
// when it matches every condition of All and, when Any is not empty, at
// least one of Any ((filters) OR (ors), as the cache lists combine them).
type UserQuery struct {
	All, Any []UserCondition
	// Sort is the field to order by (default username), then id.
	Sort string
	Desc bool
	// Limit (0: every user) and Offset select the page.
	Limit, Offset int
}

// ParseUserSort checks a sort field of the user list.
func ParseUserSort(field string) error {
	if _, ok := userQueryFields[field]; !ok {
		return InvalidField("sort", "unknown field "+strconv.Quote(clipQuery(field)))
	}
	return nil
}

// Match reports whether u matches q's conditions.
func (q UserQuery) Match(u User) bool {
	for i := range q.All {
		if !q.All[i].match(u) {
			return false
		}
	}
	if len(q.Any) == 0 {
		return true
	}
	for i := range q.Any {
		if q.Any[i].match(u) {
			return true
		}
	}
	return false
}

// Select returns the page of users q selects from users and how many
// match in all.
func (q UserQuery) Select(users []User) (page []User, total int) {
	var out []User
	for _, u := range users {
		if q.Match(u) {
			out = append(out, u)
		}
	}
	field := q.Sort
	if field == "" {
		field = "username"
	}
	slices.SortStableFunc(out, func(a, b User) int {
		c := compareUsers(field, a, b)
		if q.Desc {
			c = -c
		}
		return cmp.Or(c, strings.Compare(a.ID, b.ID))
	})
	total = len(out)
	out = out[min(q.Offset, len(out)):]
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total
}

func compareUsers(field string, a, b User) int {
	switch field {
	case "id":
		return strings.Compare(a.ID, b.ID)
	case "active":
		return cmp.Compare(boolText(a.Active), boolText(b.Active))
	case "admin":
		return cmp.Compare(boolText(a.Admin), boolText(b.Admin))
	case "dateCreated":
		return a.DateCreated.Compare(b.DateCreated)
	case "dateUpdated":
		return a.DateUpdated.Compare(b.DateUpdated)
	}
	return strings.Compare(NormalizeUsername(a.Username), NormalizeUsername(b.Username))
}

func boolText(b bool) string { return strconv.FormatBool(b) }

func (c *UserCondition) match(u User) bool {
	switch c.Op {
	case OpIsNull:
		return false
	case OpNotNull:
		return true
	}
	var cmpTo func(i int) int
	var text string
	switch c.Field {
	case "dateCreated", "dateUpdated":
		t := u.DateCreated
		if c.Field == "dateUpdated" {
			t = u.DateUpdated
		}
		cmpTo = func(i int) int { return t.Compare(c.times[i]) }
	default:
		switch c.Field {
		case "id":
			text = u.ID
		case "username":
			text = u.Username
		case "active":
			text = boolText(u.Active)
		case "admin":
			text = boolText(u.Admin)
		}
		if c.Fold {
			text = FoldCase(text)
		}
		val := func(i int) string {
			if c.Fold {
				return FoldCase(c.Values[i])
			}
			return c.Values[i]
		}
		switch c.Op {
		case OpStarts:
			return strings.HasPrefix(text, val(0))
		case OpEnds:
			return strings.HasSuffix(text, val(0))
		case OpCont:
			return strings.Contains(text, val(0))
		case OpExcl:
			return !strings.Contains(text, val(0))
		}
		cmpTo = func(i int) int { return strings.Compare(text, val(i)) }
	}
	switch c.Op {
	case OpEq:
		return cmpTo(0) == 0
	case OpNe:
		return cmpTo(0) != 0
	case OpGt:
		return cmpTo(0) > 0
	case OpLt:
		return cmpTo(0) < 0
	case OpGte:
		return cmpTo(0) >= 0
	case OpLte:
		return cmpTo(0) <= 0
	case OpBetween:
		return cmpTo(0) >= 0 && cmpTo(1) <= 0
	case OpIn, OpNotIn:
		in := false
		for i := range c.Values {
			if cmpTo(i) == 0 {
				in = true
				break
			}
		}
		return in == (c.Op == OpIn)
	}
	return false
}
