package engine

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/cachegate/cachegate/domain"
)

// ObjectName returns "<table>_<suffix>", shortened with a hash of table
// when it would pass PostgreSQL's 63-byte limit (which would otherwise
// truncate it silently, perhaps onto another name).
func ObjectName(table, suffix string) string {
	const limit = 63
	name := table + "_" + suffix
	if len(name) <= limit {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(table))
	tag := fmt.Sprintf("%08x", h.Sum32())
	return table[:limit-len(tag)-len(suffix)-2] + "_" + tag + "_" + suffix
}

// QuoteIdent quotes a name that passed bunstore's ValidateTableName (or
// is made of one, ObjectName) for DDL and statement text, which both
// databases read the same way: a table may be named after a keyword
// ("order"). bun.Ident quotes the names passed to Bun's queries so too.
func QuoteIdent(name string) string { return `"` + name + `"` }

// ChangeCost is the SQL of domain.ChangeBytes for the row rec: what the
// change logging it keeps.
func ChangeCost(rec string) string {
	return "(octet_length(" + rec + ".data) + octet_length(" + rec + ".key) + octet_length(" + rec + ".type) + " +
		strconv.Itoa(domain.RetainedRowBytes) + ")"
}
