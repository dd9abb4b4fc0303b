package web

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cachegate/cachegate/domain"
)

// Every request body is decoded by a table made once from the request
// type's struct tags; each member's Go type says how its value is read,
// and records whether it was given (ARCHITECTURE.md, "Strict JSON request
// bodies"). A String holds no NUL unless tagged ",secret" (a password:
// hashed, never stored as text); tagged ",nullable", null reads as "".

// String is a string member.
type String struct {
	Value string
	Given bool
}

// Bool is a boolean member.
type Bool struct {
	Value bool
	Given bool
}

// Raw is a member holding any JSON value but null. Value aliases the
// body.
type Raw struct {
	Value []byte
	Given bool
}

// Duration is a member holding a duration string or null (Value nil).
type Duration struct {
	Value *string
	Given bool
}

// Object, embedded first in a struct, makes the struct a nested object
// member and records whether it was given.
type Object struct {
	Given bool
}

type memberKind uint8

const (
	kindString memberKind = iota
	kindBool
	kindValue
	kindDuration
	kindObject
)

// memberKinds are the member types but objects, with how errors name
// each.
var memberKinds = map[reflect.Type]struct {
	kind memberKind
	want string
}{
	reflect.TypeFor[String]():   {kindString, "a string"},
	reflect.TypeFor[Bool]():     {kindBool, "a boolean"},
	reflect.TypeFor[Raw]():      {kindValue, "a value"},
	reflect.TypeFor[Duration](): {kindDuration, "a duration"},
}

var typeObject = reflect.TypeFor[Object]()

// member is one entry of an object's table.
type member struct {
	name string // as in the body, exact case
	path string // the field named in errors: "assignee.id"
	kind memberKind
	// nullable reads a null string as absent ("" but given); secret lets
	// a string hold NUL.
	nullable, secret bool
	// offset of the member's field in its struct.
	offset uintptr
	nested *objectTable // kindObject
}

// objectTable is what a request type's struct tags say about one object.
type objectTable struct {
	members []member
	// prefix is prepended to an unknown member's name in errors.
	prefix string
	// want describes the object in errors: "an object with a string id".
	want string
}

// Table is the table of the request type T.
type Table[T any] struct{ root *objectTable }

// NewTable builds the table of T. It panics when T has a tagged field of
// a type it cannot read, an untagged field, or a repeated name: T is a
// type of the adapter, so any test of it finds the mistake.
func NewTable[T any]() Table[T] {
	return Table[T]{root: newObjectTable(reflect.TypeFor[T](), "")}
}

// Renamed returns the table with top-level members renamed, old name to
// new, for bodies whose member names are configured (the login body). It
// fails when two members would share a name.
func (bt Table[T]) Renamed(names map[string]string) (Table[T], error) {
	ot := *bt.root
	ot.members = slices.Clone(ot.members)
	for i := range ot.members {
		if n, ok := names[ot.members[i].name]; ok {
			ot.members[i].name, ot.members[i].path = n, n
		}
	}
	for i := range ot.members {
		for _, o := range ot.members[i+1:] {
			if o.name == ot.members[i].name {
				return bt, fmt.Errorf("ginhttp: two members of a body are named %q", o.name)
			}
		}
	}
	return Table[T]{root: &ot}, nil
}

func newObjectTable(t reflect.Type, prefix string) *objectTable {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("ginhttp: request type %v is not a struct", t))
	}
	ot := &objectTable{prefix: prefix}
	var wants []string
	for i := range t.NumField() {
		f := t.Field(i)
		if i == 0 && f.Anonymous && f.Type == typeObject {
			continue
		}
		name, opt, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			panic(fmt.Sprintf("ginhttp: field %v.%s has no json name", t, f.Name))
		}
		m := member{name: name, path: prefix + name, offset: f.Offset,
			nullable: strings.Contains(","+opt+",", ",nullable,"), secret: strings.Contains(","+opt+",", ",secret,")}
		switch k, ok := memberKinds[f.Type]; {
		case ok:
			m.kind = k.kind
			wants = append(wants, k.want+" "+name)
		case f.Type.Kind() == reflect.Struct && f.Type.NumField() > 0 && f.Type.Field(0).Anonymous && f.Type.Field(0).Type == typeObject:
			m.kind, m.nested = kindObject, newObjectTable(f.Type, m.path+".")
			wants = append(wants, "an object "+name)
		default:
			panic(fmt.Sprintf("ginhttp: field %v.%s: a request body cannot hold %v", t, f.Name, f.Type))
		}
		for _, o := range ot.members {
			if o.name == name {
				panic(fmt.Sprintf("ginhttp: %v names %q twice", t, name))
			}
		}
		ot.members = append(ot.members, m)
	}
	ot.want = "an object with " + strings.Join(wants, ", ")
	return ot
}

// lookup returns the member named name, or nil.
func (ot *objectTable) lookup(name []byte) *member {
	for i := range ot.members {
		if string(name) == ot.members[i].name {
			return &ot.members[i]
		}
	}
	return nil
}

// Decode decodes b strictly into a T by the table: UTF-8, exactly one
// JSON object whose members are T's; unknown and repeated members, wrong
// types and trailing data are 400s naming the field (the member's path),
// every such problem listed, up to MaxProblems. A T's Raw members alias
// b.
func (bt Table[T]) Decode(b []byte) (T, error) {
	var dto, zero T
	if !utf8.Valid(b) {
		return zero, domain.InvalidField("body", "must be UTF-8 encoded")
	}
	d := bodyDecoder{sc: scanner{b: b}}
	if c := d.sc.peek(); c != '{' {
		if c == 0 {
			return zero, domain.InvalidField("body", "is required: send one JSON object")
		}
		if c == '"' || c == '[' || c == 't' || c == 'f' || c == 'n' || c == '-' || IsDigit(c) {
			return zero, domain.InvalidField("body", "must be a JSON object, not "+KindName(c))
		}
	}
	if err := d.object(unsafe.Pointer(&dto), bt.root); err != nil {
		return zero, bodyError(err)
	}
	// peek answers 0 for a NUL byte as for the end, so compare lengths.
	if d.sc.skipSpace(); d.sc.i < len(d.sc.b) {
		return zero, domain.InvalidField("body", "unexpected data after the JSON object at byte "+strconv.Itoa(d.sc.i))
	}
	if len(d.errs) > 0 {
		return zero, domain.Invalid(d.errs...)
	}
	return dto, nil
}

// bodyDecoder is one decoding in progress.
type bodyDecoder struct {
	sc   scanner
	errs Problems
}

// object reads an object whose '{' is next into the struct at base, whose
// table is ot. base points at a struct of the type ot was built from, so
// base plus a member's offset points at that member's field, of the type
// its kind names.
func (d *bodyDecoder) object(base unsafe.Pointer, ot *objectTable) error {
	return d.sc.members(func(name []byte) error {
		m := ot.lookup(name)
		if m == nil {
			d.errs.Add(ot.prefix+Clip(string(name)), "is not a known field")
			_, err := d.sc.value()
			return err
		}
		p := unsafe.Add(base, m.offset)
		switch m.kind {
		case kindString:
			v := (*String)(p)
			if m.nullable && d.sc.peek() == 'n' {
				d.given(m.path, &v.Given)
				return d.sc.literal("null")
			}
			return d.str(m, v)
		case kindBool:
			return d.boolean(m.path, (*Bool)(p))
		case kindValue:
			return d.value(m.path, (*Raw)(p))
		case kindDuration:
			return d.duration(m.path, (*Duration)(p))
		default:
			o := (*Object)(p)
			if o.Given {
				d.errs.Add(m.path, "is given more than once")
			}
			o.Given = true
			if c := d.sc.peek(); c != '{' {
				d.errs.Add(m.path, "must be "+m.nested.want+", not "+KindName(c))
				_, err := d.sc.value()
				return err
			}
			return d.object(p, m.nested)
		}
	})
}

// given marks a member given, noting a repeated one.
func (d *bodyDecoder) given(path string, given *bool) {
	if *given {
		d.errs.Add(path, "is given more than once")
	}
	*given = true
}

// str reads a string member.
func (d *bodyDecoder) str(m *member, v *String) error {
	d.given(m.path, &v.Given)
	if c := d.sc.peek(); c != '"' {
		d.errs.Add(m.path, "must be a string, not "+KindName(c))
		_, err := d.sc.value()
		return err
	}
	s, err := d.sc.str()
	if err != nil {
		return err
	}
	if !m.secret && strings.IndexByte(s, 0) >= 0 {
		// No store can keep a NUL in a text column; refuse it here rather
		// than fail in the database.
		d.errs.Add(m.path, "must not contain the NUL character")
	}
	v.Value = s
	return nil
}

// boolean reads true or false.
func (d *bodyDecoder) boolean(path string, v *Bool) error {
	d.given(path, &v.Given)
	switch c := d.sc.peek(); c {
	case 't':
		v.Value = true
		return d.sc.literal("true")
	case 'f':
		return d.sc.literal("false")
	default:
		d.errs.Add(path, "must be a boolean, not "+KindName(c))
		_, err := d.sc.value()
		return err
	}
}

// value reads any JSON value but null.
func (d *bodyDecoder) value(path string, v *Raw) error {
	d.given(path, &v.Given)
	raw, err := d.sc.value()
	if err != nil {
		return err
	}
	if string(raw) == "null" {
		d.errs.Add(path, "must not be null")
		return nil
	}
	v.Value = raw
	return nil
}

// duration reads a duration string or null; whether the string is a
// duration is the use case's business (domain.ParseDuration).
func (d *bodyDecoder) duration(path string, v *Duration) error {
	d.given(path, &v.Given)
	switch c := d.sc.peek(); c {
	case 'n':
		v.Value = nil
		return d.sc.literal("null")
	case '"':
		s, err := d.sc.str()
		if err != nil {
			return err
		}
		v.Value = &s
		return nil
	default:
		msg := "must be a duration string such as \"1h\" or null, not " + KindName(c)
		if c == '-' || IsDigit(c) {
			msg = "must be a duration string with a unit, such as \"30s\" or \"1h\", or null; a bare number is not accepted"
		}
		d.errs.Add(path, msg)
		_, err := d.sc.value()
		return err
	}
}

// MaxProblems bounds the field problems one answer lists, so a body with
// thousands of unknown fields gets a short answer.
const MaxProblems = 20

// MaxNameInError bounds how much of a client-chosen name is echoed back.
const MaxNameInError = 64

// Problems collects per-field problems of a request.
type Problems []domain.FieldError

// Add notes one problem, up to MaxProblems.
func (p *Problems) Add(field, msg string) {
	if len(*p) < MaxProblems {
		*p = append(*p, domain.FieldError{Field: field, Message: msg})
	}
}

// AddErr notes the field problems of a validation error.
func (p *Problems) AddErr(err error) {
	var de *domain.Error
	if errors.As(err, &de) && len(de.Details) > 0 {
		for _, d := range de.Details {
			p.Add(d.Field, d.Message)
		}
		return
	}
	p.Add("query", err.Error())
}

// bodyError turns a syntax error into the validation error of field "body".
func bodyError(err error) error {
	var se *syntaxError
	if errors.As(err, &se) {
		return domain.InvalidField("body", "malformed JSON: "+se.Error())
	}
	return err
}

// Clip shortens a client-chosen name before it is echoed in an error.
func Clip(s string) string {
	if len(s) <= MaxNameInError {
		return s
	}
	cut := MaxNameInError
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Ptr is the member's value, or nil when it was not given.
func (b Bool) Ptr() *bool {
	if !b.Given {
		return nil
	}
	return &b.Value
}

// IntParam parses an integer parameter within [lo, hi].
func IntParam(errs *Problems, name, v string, lo, hi int) *int {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		errs.Add(name, "must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
		return nil
	}
	return &n
}
