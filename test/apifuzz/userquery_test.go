package apifuzz_test

import "strings"

// The user list's query language (docs/admin.md, "Users"): the cache
// lists' grammar on the user fields, so that the admin's list cases are
// mostly well-formed queries that reach the store.
var userFieldNames = []string{"id", "username", "active", "admin", "dateCreated", "dateUpdated"}

// userCond is one condition `<field>||<operator>||<values>` on a user
// field, of the operators its kind takes.
func (f *fuzzer) userCond() string {
	g := f.gen
	field := userFieldNames[g.r.IntN(len(userFieldNames))]
	var op string
	var values []string
	switch field {
	case "id", "username":
		op = textOps[g.r.IntN(len(textOps))]
		v := func() string {
			switch {
			case field == "username" && g.chance(2):
				return []string{fuzzUsername, adminUsername}[g.r.IntN(2)]
			case field == "id" && g.chance(2):
				return []string{f.st.userID, f.st.adminID}[g.r.IntN(2)]
			}
			return strings.NewReplacer(",", "", "\x00", "").Replace(g.str(1, 8))
		}
		values = []string{v()}
		if strings.HasPrefix(op, "$in") || strings.HasPrefix(op, "$notin") {
			values = append(values, v())
		}
	case "active", "admin":
		op = []string{"$eq", "$ne", "$in", "$notin", "$isnull", "$notnull"}[g.r.IntN(6)]
		values = []string{[]string{"true", "false"}[g.r.IntN(2)]}
		if strings.HasPrefix(op, "$in") || strings.HasPrefix(op, "$notin") {
			values = append(values, "false")
		}
	default:
		op = orderOps[g.r.IntN(len(orderOps))]
		values = []string{g.drawString(dateSchema)}
		if op == "$between" || strings.HasPrefix(op, "$in") || strings.HasPrefix(op, "$notin") {
			values = append(values, g.drawString(dateSchema))
		}
	}
	if op == "$isnull" || op == "$notnull" {
		return field + "||" + op
	}
	return field + "||" + op + "||" + strings.Join(values, ",")
}

// userQuery replaces the drawn filters, ors and sort of r with
// well-formed ones.
func (f *fuzzer) userQuery(r *request) {
	g := f.gen
	for _, n := range []string{"filter", "filter[]", "or", "or[]", "sort"} {
		r.drop(n)
	}
	for range g.r.IntN(3) {
		r.query = append(r.query, [2]string{[]string{"filter", "filter[]"}[g.r.IntN(2)], f.userCond()})
	}
	for range g.r.IntN(2) {
		r.query = append(r.query, [2]string{[]string{"or", "or[]"}[g.r.IntN(2)], f.userCond()})
	}
	if g.chance(2) {
		r.query = append(r.query, [2]string{"sort", userFieldNames[g.r.IntN(len(userFieldNames))] + []string{"", ",ASC", ",desc"}[g.r.IntN(3)]})
	}
}
