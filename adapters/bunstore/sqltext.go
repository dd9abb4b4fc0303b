package bunstore

import (
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// The SQL text the stores' statements share.

// comparators are the SQL comparison operators of the query language's
// ordering operators (entries, users and audit lists).
var comparators = map[domain.QueryOp]string{
	domain.OpEq: " = ", domain.OpNe: " <> ", domain.OpGt: " > ", domain.OpLt: " < ", domain.OpGte: " >= ", domain.OpLte: " <= ",
}

// placeholders returns n ? placeholders separated by commas.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
