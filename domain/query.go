package domain

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The list query language (docs/api.md, "Listing: the query language") in
// the core's terms: a tree of conditions on the fields of one FieldSet, and
// sort keys (ARCHITECTURE.md, "Lists and the query language"). A Condition
// or a Filter that exists is valid: its field, operator and values agree.

// QueryField names a field that lists filter and sort on.
type QueryField uint8

// The query fields. The zero value is no field.
const (
	FieldID QueryField = iota + 1
	FieldKey
	FieldType
	FieldAssigneeID
	FieldVersion
	FieldDateCreated
	FieldDateUpdated
	FieldExpirationDate
	FieldUsername
	FieldActive
	FieldAdmin
	FieldAddress
	FieldTime
)

var queryFieldNames = [...]string{"", "id", "key", "type", "assignee.id", "version", "dateCreated", "dateUpdated", "expirationDate",
	"username", "active", "admin", "address", "time"}

// FieldSet is the fields one list filters and sorts on.
type FieldSet struct {
	fields []QueryField
	// refused are names that are no field, with why.
	refused map[string]string
	// anyText lets text values hold any bytes (NUL, invalid UTF-8): the
	// set is evaluated in Go only, never bound into SQL.
	anyText bool
	// text puts a text value of a field in the form the stores keep and
	// compare, or refuses it.
	text map[QueryField]func(string) (string, error)
	// maxText, when not zero, is the most characters a text value holds.
	maxText int
	// comparisons limits conditions to what a store translates to plain
	// SQL comparisons on its indexed columns (see Condition).
	comparisons bool
}

// The field sets: the cache entries' (docs/api.md), and the users' and
// the audit events' of the admin API (docs/admin.md). Ids (UUIDs)
// compare in lower case, as the stores keep them; an audit username
// compares as logins compare usernames, and an audit type must be one.
var (
	EntryFields = FieldSet{fields: []QueryField{FieldID, FieldKey, FieldType, FieldAssigneeID, FieldVersion, FieldDateCreated,
		FieldDateUpdated, FieldExpirationDate}, refused: map[string]string{"data": "cannot filter or sort on data: it is an opaque JSON value"},
		text: map[QueryField]func(string) (string, error){FieldID: lowerText, FieldAssigneeID: lowerText}}
	UserFields = FieldSet{fields: []QueryField{FieldID, FieldUsername, FieldActive, FieldAdmin, FieldDateCreated, FieldDateUpdated},
		anyText: true, text: map[QueryField]func(string) (string, error){FieldID: lowerText}}
	AuditFields = FieldSet{fields: []QueryField{FieldType, FieldUsername, FieldAddress, FieldTime}, maxText: 1024, comparisons: true,
		text: map[QueryField]func(string) (string, error){FieldType: auditTypeText, FieldUsername: auditUsernameText}}
)

func lowerText(s string) (string, error) { return strings.ToLower(s), nil }

func auditTypeText(s string) (string, error) {
	if !AuditType(s).Valid() {
		return "", queryValueError(strconv.Quote(clipQuery(s)) + " is not an audit event type")
	}
	return s, nil
}

func auditUsernameText(s string) (string, error) { return NormalizeUsername(CutAuditUsername(s)), nil }

// Fields lists the fields of s.
func (s FieldSet) Fields() []QueryField { return slices.Clone(s.fields) }

// names lists the names of s's fields of kind (any kind when 0), as
// "a, b or c".
func (s FieldSet) names(kind FieldKind) string {
	var names []string
	for _, f := range s.fields {
		if kind == 0 || f.Kind() == kind {
			names = append(names, f.String())
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Field returns the field of s named name, or an Invalid error naming it
// (what names "where" in the error: "filter", "sort", …).
func (s FieldSet) Field(where, name string) (QueryField, error) {
	for _, f := range s.fields {
		if f.String() == name {
			return f, nil
		}
	}
	if why, ok := s.refused[name]; ok {
		return 0, InvalidField(where, why)
	}
	return 0, InvalidField(where, "unknown field "+strconv.Quote(clipQuery(name))+"; use "+s.names(0))
}

// String returns the field's name on the wire ("assignee.id").
func (f QueryField) String() string {
	if int(f) < len(queryFieldNames) {
		return queryFieldNames[f]
	}
	return ""
}

// FieldKind is the type of a query field's values.
type FieldKind uint8

// The field kinds. A KindBool value is the text "true" or "false".
const (
	KindText FieldKind = iota + 1
	KindInteger
	KindTime
	KindBool
)

// Kind returns the type of f's values.
func (f QueryField) Kind() FieldKind {
	switch f {
	case FieldVersion:
		return KindInteger
	case FieldDateCreated, FieldDateUpdated, FieldExpirationDate, FieldTime:
		return KindTime
	case FieldActive, FieldAdmin:
		return KindBool
	default:
		return KindText
	}
}

// Nullable reports whether f may have no value: only expirationDate (an
// entry that never expires).
func (f QueryField) Nullable() bool { return f == FieldExpirationDate }

// QueryOp is a comparison operator.
type QueryOp uint8

// The operators. Text-only operators are Starts, Ends, Cont and Excl.
const (
	OpEq QueryOp = iota + 1
	OpNe
	OpGt
	OpLt
	OpGte
	OpLte
	OpStarts
	OpEnds
	OpCont
	OpExcl
	OpIn
	OpNotIn
	OpIsNull
	OpNotNull
	OpBetween
)

var queryOpNames = [...]string{"", "eq", "ne", "gt", "lt", "gte", "lte", "starts", "ends", "cont", "excl", "in", "notin", "isnull", "notnull", "between"}

// String returns the operator's name with its "$" ("$cont").
func (o QueryOp) String() string {
	if o == 0 || int(o) >= len(queryOpNames) {
		return ""
	}
	return "$" + queryOpNames[o]
}

// Foldable reports whether o has a case-insensitive "L" form.
func (o QueryOp) Foldable() bool {
	switch o {
	case OpEq, OpNe, OpStarts, OpEnds, OpCont, OpExcl, OpIn, OpNotIn:
		return true
	}
	return false
}

// equality reports whether o compares for equality only ($eq $ne $in
// $notin).
func (o QueryOp) equality() bool { return o == OpEq || o == OpNe || o == OpIn || o == OpNotIn }

// textOnly reports whether o applies to text fields only.
func (o QueryOp) textOnly() bool {
	switch o {
	case OpStarts, OpEnds, OpCont, OpExcl:
		return true
	}
	return false
}

// ParseQueryOp returns the operator named name: "$cont", its old name
// without "$" ("cont"), or an L form ("$contL", case-insensitive: fold is
// then true). Names are case-sensitive, as in @nestjsx/crud.
func ParseQueryOp(where, name string) (op QueryOp, fold bool, err error) {
	base, dollar := strings.CutPrefix(name, "$")
	if dollar {
		if b, ok := strings.CutSuffix(base, "L"); ok {
			base, fold = b, true
		}
	}
	for i, n := range queryOpNames {
		if i > 0 && n == base && (!fold || QueryOp(i).Foldable()) {
			return QueryOp(i), fold, nil
		}
	}
	return 0, false, InvalidField(where, "unknown operator "+strconv.Quote(clipQuery(name))+
		"; use $eq $ne $gt $lt $gte $lte $starts $ends $cont $excl $in $notin $isnull $notnull $between or an L form ($eqL $neL $startsL $endsL $contL $exclL $inL $notinL)")
}

// QueryValue is one operand of a condition; the field's kind says which
// member holds it.
type QueryValue struct {
	Text string
	Int  int64
	Time time.Time
}

// Condition compares one field with its values. Fold (the L forms)
// compares the field and the values case-folded (FoldCase).
type Condition struct {
	Field  QueryField
	Op     QueryOp
	Fold   bool
	Values []QueryValue
}

// NewCondition checks and converts a condition on an entry field
// (EntryFields.Condition).
func NewCondition(where string, field QueryField, op QueryOp, fold bool, raw []string) (Condition, error) {
	return EntryFields.Condition(where, field, op, fold, raw)
}

// Condition checks and converts a condition on a field of s whose values
// are given as text: integers in decimal, times in RFC 3339 (kept to the
// microsecond, in UTC, as the stores keep theirs), booleans "true" or
// "false" (with $eq, $ne, $in and $notin only). $in and $notin take one
// value or more, $between two, $isnull and $notnull none (values given
// are ignored), the others one. Text operators and L forms apply to text
// fields only; text values take the set's form (see EntryFields). where
// names the condition in errors.
func (s FieldSet) Condition(where string, field QueryField, op QueryOp, fold bool, raw []string) (Condition, error) {
	c := Condition{Field: field, Op: op, Fold: fold}
	if !slices.Contains(s.fields, field) || op.String() == "" {
		return Condition{}, InvalidField(where, "unknown field or operator")
	}
	kind := field.Kind()
	if (op.textOnly() || fold) && kind != KindText {
		name := op.String()
		if fold {
			name += "L"
		}
		return Condition{}, InvalidField(where, name+" applies to text fields only ("+strings.ReplaceAll(s.names(KindText), " or ", ", ")+"), not "+field.String())
	}
	if fold && !op.Foldable() {
		return Condition{}, InvalidField(where, op.String()+" has no L form")
	}
	if s.comparisons && (fold || op == OpIsNull || op == OpNotNull || kind == KindText && !op.equality()) {
		ops := "$eq, $ne, $in or $notin"
		if kind == KindTime {
			ops = "$eq, $ne, $gt, $lt, $gte, $lte, $in, $notin or $between"
		}
		return Condition{}, InvalidField(where, field.String()+" takes "+ops)
	}
	if kind == KindBool && !op.equality() && op != OpIsNull && op != OpNotNull {
		return Condition{}, InvalidField(where, field.String()+" is true or false: use $eq, $ne, $in or $notin")
	}
	want, enough := "one value", len(raw) == 1
	switch op {
	case OpIsNull, OpNotNull:
		return c, nil
	case OpIn, OpNotIn:
		want, enough = "one value or more", len(raw) > 0
	case OpBetween:
		want, enough = "two values", len(raw) == 2
	}
	if !enough {
		return Condition{}, InvalidField(where, field.String()+" "+op.String()+" needs "+want)
	}
	c.Values = make([]QueryValue, len(raw))
	for i, text := range raw {
		v, err := s.parseValue(kind, field, text)
		if kind == KindBool && err != nil {
			return Condition{}, InvalidField(where, field.String()+" takes true or false")
		}
		if err != nil {
			return Condition{}, InvalidField(where, field.String()+": "+err.Error())
		}
		c.Values[i] = v
	}
	return c, nil
}

// rfc3339Shape is the form of a date-time value the OpenAPI document's
// pattern allows (adapters/ginhttp/openapi.json, ListCondition): "T" and
// "Z" in upper case, two-digit fields, offsets up to 23:59, none of which
// time.Parse checks; it checks the ranges. The year 0000 is refused as
// written, whatever its offset, as the pattern refuses it.
var rfc3339Shape = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`)

type queryValueError string

func (e queryValueError) Error() string { return string(e) }

func (set FieldSet) parseValue(kind FieldKind, field QueryField, s string) (QueryValue, error) {
	switch kind {
	case KindInteger:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return QueryValue{}, queryValueError(strconv.Quote(clipQuery(s)) + " is not an integer")
		}
		return QueryValue{Int: n}, nil
	case KindTime:
		t, err := time.Parse(time.RFC3339Nano, s)
		if !rfc3339Shape.MatchString(s) || strings.HasPrefix(s, "0000") || err != nil {
			return QueryValue{}, queryValueError(strconv.Quote(clipQuery(s)) + " is not an RFC 3339 date-time")
		}
		t = Normalize(t)
		if y := t.Year(); y < 1 || y > 9999 {
			return QueryValue{}, queryValueError(strconv.Quote(clipQuery(s)) + " is outside the years 0001 to 9999 (UTC)")
		}
		return QueryValue{Time: t}, nil
	case KindBool:
		if s != "true" && s != "false" {
			return QueryValue{}, queryValueError("not a boolean")
		}
		return QueryValue{Text: s}, nil
	}
	if !set.anyText && (!utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0) {
		return QueryValue{}, queryValueError("values must be valid UTF-8 without NUL characters")
	}
	if set.maxText > 0 && utf8.RuneCountInString(s) > set.maxText {
		return QueryValue{}, queryValueError("values hold at most " + strconv.Itoa(set.maxText) + " characters")
	}
	if f := set.text[field]; f != nil {
		var err error
		if s, err = f(s); err != nil {
			return QueryValue{}, err
		}
	}
	return QueryValue{Text: s}, nil
}

// FoldCase returns s case-folded for the L operators: each character
// mapped by unicode.ToLower (the simple mapping, one character to one,
// without context). Every store applies exactly this mapping, never a
// locale's.
func FoldCase(s string) string { return strings.Map(unicode.ToLower, s) }

// FilterKind tells what a Filter node is.
type FilterKind uint8

// The filter kinds. The zero value, an All with no members, matches every
// entry; an Any with no members matches none.
const (
	FilterAll FilterKind = iota
	FilterAny
	FilterCond
)

// Filter is a tree of conditions: a Condition, or All (AND) or Any (OR) of
// sub-filters. The zero Filter matches everything. A condition on a field
// without a value (expirationDate NULL) is false for every operator but
// $isnull, as in SQL.
type Filter struct {
	Kind FilterKind
	Cond Condition
	Subs []Filter
}

// Where returns the filter of one condition.
func Where(c Condition) Filter { return Filter{Kind: FilterCond, Cond: c} }

// AllOf returns the filter matching what every f matches.
func AllOf(fs ...Filter) Filter { return Filter{Kind: FilterAll, Subs: fs} }

// AnyOf returns the filter matching what any f matches.
func AnyOf(fs ...Filter) Filter { return Filter{Kind: FilterAny, Subs: fs} }

// IsAll reports whether f matches everything by construction (an All
// with no members).
func (f Filter) IsAll() bool { return f.Kind == FilterAll && len(f.Subs) == 0 }

// Conditions returns how many conditions f holds.
func (f Filter) Conditions() int {
	if f.Kind == FilterCond {
		return 1
	}
	n := 0
	for _, s := range f.Subs {
		n += s.Conditions()
	}
	return n
}

// Depth returns how deeply f nests (a condition is 1).
func (f Filter) Depth() int {
	if f.Kind == FilterCond {
		return 1
	}
	d := 0
	for _, s := range f.Subs {
		d = max(d, s.Depth())
	}
	return d + 1
}

// Limits of one list query, so that no query is costly to translate or
// run.
const (
	MaxQueryConditions = 50
	MaxQueryDepth      = 8
)

// ValidateFilter checks f against the limits.
func ValidateFilter(where string, f Filter) error {
	if n := f.Conditions(); n > MaxQueryConditions {
		return InvalidField(where, "has "+strconv.Itoa(n)+" conditions; at most "+strconv.Itoa(MaxQueryConditions)+" are allowed")
	}
	if d := f.Depth(); d > MaxQueryDepth {
		return InvalidField(where, "nests "+strconv.Itoa(d)+" levels deep; at most "+strconv.Itoa(MaxQueryDepth)+" are allowed")
	}
	return nil
}

// SortKey orders a list by one field. Lists always end their order with
// id ascending, so equal keys keep a stable order. An entry without an
// expirationDate sorts as if it expired after every dated one.
type SortKey struct {
	Field QueryField
	Desc  bool
}

// clipQuery shortens s for an error message.
func clipQuery(s string) string {
	if len(s) <= 40 {
		return s
	}
	return cutBytes(s, 40) + "…"
}
