package apifuzz_test

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The query language (README.md, "Lists"; domain/query.go): fields with
// their kinds and the operators each kind takes, so the list cases are
// mostly well-formed queries that reach the stores, not only the strings
// the document's patterns admit.
var (
	listFields = map[string]string{"id": "uuid", "key": "text", "type": "text", "assignee.id": "uuid",
		"version": "int", "dateCreated": "date", "dateUpdated": "date", "expirationDate": "date"}
	listFieldNames = []string{"id", "key", "type", "assignee.id", "version", "dateCreated", "dateUpdated", "expirationDate"}
	textOps        = []string{"$eq", "$ne", "$gt", "$lt", "$gte", "$lte", "$starts", "$ends", "$cont", "$excl",
		"$in", "$notin", "$eqL", "$neL", "$startsL", "$endsL", "$contL", "$exclL", "$inL", "$notinL"}
	orderOps = []string{"$eq", "$ne", "$gt", "$lt", "$gte", "$lte", "$in", "$notin", "$between"}
)

func (f *fuzzer) listValue(kind string) string {
	g := f.gen
	switch kind {
	case "uuid":
		if g.chance(2) {
			return f.st.userID
		}
		return g.drawString(uuidSchema)
	case "int":
		return fmt.Sprint(g.r.IntN(5))
	case "date":
		return g.drawString(dateSchema)
	}
	return strings.NewReplacer(",", "", "\x00", "").Replace(g.str(1, 8))
}

// cond is one condition of the query language.
type cond struct {
	field, op, kind string
	values          []string
}

func (f *fuzzer) cond() cond {
	g := f.gen
	c := cond{field: listFieldNames[g.r.IntN(len(listFieldNames))]}
	c.kind = listFields[c.field]
	if c.field == "expirationDate" && g.chance(3) {
		c.op = []string{"$isnull", "$notnull"}[g.r.IntN(2)]
		return c
	}
	ops := orderOps
	if c.kind == "text" {
		ops = textOps
	}
	c.op = ops[g.r.IntN(len(ops))]
	c.values = []string{f.listValue(c.kind)}
	if strings.HasPrefix(c.op, "$in") || strings.HasPrefix(c.op, "$notin") || c.op == "$between" {
		c.values = append(c.values, f.listValue(c.kind))
	}
	return c
}

// text is the condition as `<field>||<operator>||<value>`.
func (c cond) text() string {
	if len(c.values) == 0 {
		return c.field + "||" + c.op
	}
	return c.field + "||" + c.op + "||" + strings.Join(c.values, ",")
}

// search is the condition as a member of `s`.
func (c cond) search() string {
	js := func(v string) string {
		if c.kind == "int" {
			return v
		}
		return string(mustJSON(v))
	}
	switch {
	case c.op == "$isnull":
		return fmt.Sprintf(`{%q:null}`, c.field)
	case c.op == "$notnull":
		return fmt.Sprintf(`{%q:{"$notnull":true}}`, c.field)
	case len(c.values) > 1:
		var vs []string
		for _, v := range c.values {
			vs = append(vs, js(v))
		}
		return fmt.Sprintf(`{%q:{%q:[%s]}}`, c.field, c.op, strings.Join(vs, ","))
	}
	return fmt.Sprintf(`{%q:{%q:%s}}`, c.field, c.op, js(c.values[0]))
}

// listQuery replaces the drawn query language parameters of r with
// well-formed ones: filters, ors, or a search, sorts and fields.
func (f *fuzzer) listQuery(r *request) {
	g := f.gen
	for _, n := range []string{"filter", "filter[]", "or", "or[]", "s", "sort", "sort[]"} {
		r.drop(n)
	}
	if g.chance(3) {
		s := f.cond().search()
		if g.chance(2) {
			s = `{"$or":[` + s + `,{"version":{"$gte":1}}]}`
		}
		r.query = append(r.query, [2]string{"s", s})
	} else {
		for range g.r.IntN(3) {
			r.query = append(r.query, [2]string{[]string{"filter", "filter[]"}[g.r.IntN(2)], f.cond().text()})
		}
		for range g.r.IntN(2) {
			r.query = append(r.query, [2]string{[]string{"or", "or[]"}[g.r.IntN(2)], f.cond().text()})
		}
	}
	for range g.r.IntN(3) {
		r.query = append(r.query, [2]string{"sort", listFieldNames[g.r.IntN(len(listFieldNames))] + []string{"", ",ASC", ",desc"}[g.r.IntN(3)]})
	}
}

var (
	uuidSchema = &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "uuid"}
	dateSchema = &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "date-time"}
)
