package contract

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// The query oracle: an evaluator of the list query language written
// for the tests from docs/api.md ("Listing") alone, sharing no code with
// the stores or the domain (it folds with strings.ToLower, parses values
// itself and follows SQL's NULL rules by hand). The contract suites
// compare what a store answers with what the oracle computes.

// qnode is a query as the tests write it: a condition (field, op, vals)
// or an AND / OR of nodes.
type qnode struct {
	and, or bool
	subs    []qnode
	field   string
	op      string
	vals    []string
}

func qc(field, op string, vals ...string) qnode { return qnode{field: field, op: op, vals: vals} }
func qand(ns ...qnode) qnode                    { return qnode{and: true, subs: ns} }
func qor(ns ...qnode) qnode                     { return qnode{or: true, subs: ns} }

// String renders n for failure messages.
func (n qnode) String() string {
	if n.and || n.or {
		parts := make([]string, len(n.subs))
		for i, s := range n.subs {
			parts[i] = s.String()
		}
		sep := " AND "
		if n.or {
			sep = " OR "
		}
		return "(" + strings.Join(parts, sep) + ")"
	}
	return n.field + "||" + n.op + "||" + strings.Join(n.vals, ",")
}

// qrec is an entry as the oracle sees it.
type qrec struct {
	id, key, typ, assignee string
	version                int64
	created, updated       time.Time
	expires                *time.Time
}

func qrecOf(e domain.Entry) qrec {
	return qrec{id: e.ID, key: e.Key, typ: e.Type, assignee: e.AssigneeID, version: int64(e.Version),
		created: e.DateCreated, updated: e.DateUpdated, expires: e.ExpiresAt}
}

// qvalue is a field's value: kind "text", "int" or "time"; null when the
// entry has none.
type qvalue struct {
	kind string
	s    string
	n    int64
	t    time.Time
	null bool
}

func (r qrec) get(field string) qvalue {
	switch field {
	case "id":
		return qvalue{kind: "text", s: r.id}
	case "key":
		return qvalue{kind: "text", s: r.key}
	case "type":
		return qvalue{kind: "text", s: r.typ}
	case "assignee.id":
		return qvalue{kind: "text", s: r.assignee}
	case "version":
		return qvalue{kind: "int", n: r.version}
	case "dateCreated":
		return qvalue{kind: "time", t: r.created}
	case "dateUpdated":
		return qvalue{kind: "time", t: r.updated}
	case "expirationDate":
		if r.expires == nil {
			return qvalue{kind: "time", null: true}
		}
		return qvalue{kind: "time", t: *r.expires}
	}
	panic("oracle: unknown field " + field)
}

// operand parses a value given for field.
func operand(t *testing.T, kind, field, s string) qvalue {
	switch kind {
	case "int":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("oracle: %q is not an integer", s)
		}
		return qvalue{kind: kind, n: n}
	case "time":
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("oracle: %q is not a time", s)
		}
		return qvalue{kind: kind, t: tm.UTC().Truncate(time.Microsecond)}
	}
	if field == "id" || field == "assignee.id" {
		s = strings.ToLower(s)
	}
	return qvalue{kind: kind, s: s}
}

func qcompare(a, b qvalue) int {
	switch a.kind {
	case "int":
		return cmp.Compare(a.n, b.n)
	case "time":
		return a.t.Compare(b.t)
	}
	return strings.Compare(a.s, b.s)
}

// eval reports whether r matches n.
func (n qnode) eval(t *testing.T, r qrec) bool {
	switch {
	case n.and:
		for _, s := range n.subs {
			if !s.eval(t, r) {
				return false
			}
		}
		return true
	case n.or:
		for _, s := range n.subs {
			if s.eval(t, r) {
				return true
			}
		}
		return false
	}
	v := r.get(n.field)
	op := strings.TrimPrefix(n.op, "$")
	fold := strings.HasSuffix(op, "L")
	op = strings.TrimSuffix(op, "L")
	switch op {
	case "isnull":
		return v.null
	case "notnull":
		return !v.null
	}
	if v.null {
		return false // SQL: a comparison with NULL is never true
	}
	ops := make([]qvalue, len(n.vals))
	for i, s := range n.vals {
		ops[i] = operand(t, v.kind, n.field, s)
		if fold {
			ops[i].s = strings.ToLower(ops[i].s)
		}
	}
	if fold {
		v.s = strings.ToLower(v.s)
	}
	switch op {
	case "eq":
		return qcompare(v, ops[0]) == 0
	case "ne":
		return qcompare(v, ops[0]) != 0
	case "gt":
		return qcompare(v, ops[0]) > 0
	case "lt":
		return qcompare(v, ops[0]) < 0
	case "gte":
		return qcompare(v, ops[0]) >= 0
	case "lte":
		return qcompare(v, ops[0]) <= 0
	case "between":
		return qcompare(v, ops[0]) >= 0 && qcompare(v, ops[1]) <= 0
	case "in", "notin":
		found := slices.ContainsFunc(ops, func(o qvalue) bool { return qcompare(v, o) == 0 })
		return found == (op == "in")
	case "starts":
		return strings.HasPrefix(v.s, ops[0].s)
	case "ends":
		return strings.HasSuffix(v.s, ops[0].s)
	case "cont":
		return strings.Contains(v.s, ops[0].s)
	case "excl":
		return !strings.Contains(v.s, ops[0].s)
	}
	t.Fatalf("oracle: unknown operator %s", n.op)
	return false
}

// qsort is one sort key as the tests write it.
type qsort struct {
	field string
	desc  bool
}

// order sorts recs as the contract says: by each key (a missing expiry
// after every date), then by id ascending.
func order(recs []qrec, keys []qsort) []qrec {
	out := slices.Clone(recs)
	slices.SortFunc(out, func(a, b qrec) int {
		for _, k := range keys {
			va, vb := a.get(k.field), b.get(k.field)
			var c int
			switch {
			case va.null && vb.null:
			case va.null:
				c = 1
			case vb.null:
				c = -1
			default:
				c = qcompare(va, vb)
			}
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// oracleIDs returns the ids of the recs matching n, in the order of keys
// (dateCreated when none).
func oracleIDs(t *testing.T, recs []qrec, n qnode, keys []qsort) []string {
	if len(keys) == 0 {
		keys = []qsort{{field: "dateCreated"}}
	}
	var match []qrec
	for _, r := range recs {
		if n.eval(t, r) {
			match = append(match, r)
		}
	}
	ids := []string{}
	for _, r := range order(match, keys) {
		ids = append(ids, r.id)
	}
	return ids
}

// domainFilter builds the core's filter of n through the domain's
// constructors (the names parsed as the HTTP edge parses them).
func domainFilter(t *testing.T, n qnode) domain.Filter {
	t.Helper()
	if n.and || n.or {
		subs := make([]domain.Filter, len(n.subs))
		for i, s := range n.subs {
			subs[i] = domainFilter(t, s)
		}
		if n.or {
			return domain.AnyOf(subs...)
		}
		return domain.AllOf(subs...)
	}
	f, err := domain.EntryFields.Field("test", n.field)
	if err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	op, fold, err := domain.ParseQueryOp("test", n.op)
	if err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	c, err := domain.NewCondition("test", f, op, fold, n.vals)
	if err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	return domain.Where(c)
}

func domainSort(t *testing.T, keys []qsort) []domain.SortKey {
	t.Helper()
	var out []domain.SortKey
	for _, k := range keys {
		f, err := domain.EntryFields.Field("sort", k.field)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, domain.SortKey{Field: f, Desc: k.desc})
	}
	return out
}
