package ginhttp

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cachegate/cachegate/domain"
)

// Request bodies are decoded by a table made from the request type's
// struct tags (ARCHITECTURE.md, "Strict JSON request bodies"): the scanner
// (jsonscan.go) knows JSON only, the request type knows its members, and
// adding a member is one tagged field. Each member's Go type says how its
// value is read:
//
//	jsonString    a string (no NUL)
//	jsonValue     any JSON value but null, kept as its raw bytes
//	jsonDuration  a duration string, or null
//	a struct      a nested object: its first field embeds jsonObject, the
//	              others are tagged members in turn
//
// Every one records whether the member was given, so PATCH tells absent
// from null. Reflection runs once per request type, when its table is
// built (newBodyTable, at package initialisation); a request only walks
// the table.

// jsonString is a string member.
type jsonString struct {
	Value string
	Given bool
}

// jsonValue is a member holding any JSON value but null. Value aliases
// the body.
type jsonValue struct {
	Value []byte
	Given bool
}

// jsonDuration is a member holding a duration string or null (Value nil).
type jsonDuration struct {
	Value *string
	Given bool
}

// jsonObject, embedded first in a struct, makes the struct a nested
// object member and records whether it was given.
type jsonObject struct {
	Given bool
}

type memberKind uint8

const (
	kindString memberKind = iota
	kindValue
	kindDuration
	kindObject
)

var (
	typeString   = reflect.TypeFor[jsonString]()
	typeValue    = reflect.TypeFor[jsonValue]()
	typeDuration = reflect.TypeFor[jsonDuration]()
	typeObject   = reflect.TypeFor[jsonObject]()
)

// member is one entry of an object's table.
type member struct {
	name string // as in the body, exact case
	path string // the field named in errors: "assignee.id"
	kind memberKind
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

// bodyTable is the table of the request type T.
type bodyTable[T any] struct{ root *objectTable }

// newBodyTable builds the table of T. It panics when T has a tagged field
// of a type it cannot read, an untagged field, or a repeated name: T is
// a type of this package, so any test of it finds the mistake.
func newBodyTable[T any]() bodyTable[T] {
	return bodyTable[T]{root: newObjectTable(reflect.TypeFor[T](), "")}
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
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			panic(fmt.Sprintf("ginhttp: field %v.%s has no json name", t, f.Name))
		}
		m := member{name: name, path: prefix + name, offset: f.Offset}
		switch {
		case f.Type == typeString:
			m.kind = kindString
			wants = append(wants, "a string "+name)
		case f.Type == typeValue:
			m.kind = kindValue
			wants = append(wants, "a value "+name)
		case f.Type == typeDuration:
			m.kind = kindDuration
			wants = append(wants, "a duration "+name)
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

// decode decodes b strictly into a T by the table: UTF-8, exactly one
// JSON object whose members are T's; unknown and repeated members, wrong
// types and trailing data are 400s naming the field (the member's path),
// every such problem listed, up to maxProblems. A T's jsonValue members
// alias b.
func (bt bodyTable[T]) decode(b []byte) (T, error) {
	var dto T
	if !utf8.Valid(b) {
		return dto, domain.InvalidField("body", "must be UTF-8 encoded")
	}
	d := bodyDecoder{sc: scanner{b: b}}
	if c := d.sc.peek(); c != '{' {
		if c == 0 {
			return dto, domain.InvalidField("body", "is required: send one JSON object")
		}
		if c == '"' || c == '[' || c == 't' || c == 'f' || c == 'n' || c == '-' || isDigit(c) {
			return dto, domain.InvalidField("body", "must be a JSON object, not "+kindName(c))
		}
	}
	if err := d.object(unsafe.Pointer(&dto), bt.root); err != nil {
		var zero T
		return zero, bodyError(err)
	}
	// peek answers 0 for a NUL byte as for the end, so compare lengths.
	if d.sc.skipSpace(); d.sc.i < len(d.sc.b) {
		var zero T
		return zero, domain.InvalidField("body", "unexpected data after the JSON object at byte "+strconv.Itoa(d.sc.i))
	}
	if len(d.errs) > 0 {
		var zero T
		return zero, domain.Invalid(d.errs...)
	}
	return dto, nil
}

// bodyDecoder is one decoding in progress.
type bodyDecoder struct {
	sc   scanner
	errs problems
}

// object reads an object whose '{' is next into the struct at base, whose
// table is ot. base points at a struct of the type ot was built from, so
// base plus a member's offset points at that member's field, of the type
// its kind names.
func (d *bodyDecoder) object(base unsafe.Pointer, ot *objectTable) error {
	return d.sc.members(func(name []byte) error {
		m := ot.lookup(name)
		if m == nil {
			d.errs.add(ot.prefix+clip(string(name)), "is not a known field")
			_, err := d.sc.value()
			return err
		}
		p := unsafe.Add(base, m.offset)
		switch m.kind {
		case kindString:
			v := (*jsonString)(p)
			return stringMember(&d.sc, &d.errs, m.path, &v.Given, &v.Value)
		case kindValue:
			return d.value(m.path, (*jsonValue)(p))
		case kindDuration:
			return d.duration(m.path, (*jsonDuration)(p))
		default:
			o := (*jsonObject)(p)
			if o.Given {
				d.errs.add(m.path, "is given more than once")
			}
			o.Given = true
			if c := d.sc.peek(); c != '{' {
				d.errs.add(m.path, "must be "+m.nested.want+", not "+kindName(c))
				_, err := d.sc.value()
				return err
			}
			return d.object(p, m.nested)
		}
	})
}

// value reads any JSON value but null.
func (d *bodyDecoder) value(path string, v *jsonValue) error {
	if v.Given {
		d.errs.add(path, "is given more than once")
	}
	v.Given = true
	raw, err := d.sc.value()
	if err != nil {
		return err
	}
	if string(raw) == "null" {
		d.errs.add(path, "must not be null")
		return nil
	}
	v.Value = raw
	return nil
}

// duration reads a duration string or null; whether the string is a
// duration is the use case's business (domain.ParseDuration).
func (d *bodyDecoder) duration(path string, v *jsonDuration) error {
	if v.Given {
		d.errs.add(path, "is given more than once")
	}
	v.Given = true
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
		msg := "must be a duration string such as \"1h\" or null, not " + kindName(c)
		if c == '-' || isDigit(c) {
			msg = "must be a duration string with a unit, such as \"30s\" or \"1h\", or null; a bare number is not accepted"
		}
		d.errs.add(path, msg)
		_, err := d.sc.value()
		return err
	}
}
