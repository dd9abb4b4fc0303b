package bunstore

import (
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// Case folding for the L operators ($contL, $eqL, …) must give the same
// answers on SQLite, on PostgreSQL and in memstore. Neither database's
// own lower() will do: SQLite's folds ASCII only, and PostgreSQL's follows
// the collation (ASCII only for our COLLATE "C" columns, a locale's rules
// otherwise, which differ between servers). So every fold is
// domain.FoldCase's mapping (Go's unicode.ToLower, character by
// character) and nothing else:
//
//   - key and type are folded in Go when a row is written, into
//     key_folded and type_folded (fold_schema.go), so a query folds
//     nothing per row: folding per row in SQL cost milliseconds a row
//     for long non-ASCII keys on PostgreSQL (docs/benchmarks.md,
//     "Case-insensitive operators");
//   - id and assignee_id, UUIDs stored in lower case, go through
//     foldFunction. On SQLite it is the Go function itself, registered
//     with the driver (modernc.org/sqlite) as a deterministic scalar
//     function; on PostgreSQL an SQL function that Migrate (re)defines at
//     every start, under the migration lock: lower() in the "C" collation
//     for ASCII (always, for a UUID), else translate() over every
//     non-ASCII character that unicode.ToLower changes, a table generated
//     from the Go tables of the running binary, so it is the same mapping
//     character for character.
const foldFunction = "cachegate_fold"

// foldedColumn returns the SQL of the folded form of field, whose column
// is col: the stored folded key or type (fold_schema.go), folded in Go
// when the row was written, so a query folds nothing per row; id and
// assignee_id, which are UUIDs (ASCII, stored in lower case), through
// foldFunction, which takes its ASCII path on them.
func foldedColumn(field domain.QueryField, col string) string {
	switch field {
	case domain.FieldKey:
		return foldedKey
	case domain.FieldType:
		return foldedType
	}
	return foldFunction + "(" + col + ")"
}

// appendFoldedKeyLookup writes c, a $eqL or $inL on key, so that both
// databases can answer it from indexes, as they answer $eq and $in: a key
// with capitals matches on its stored fold (the partial index of
// key_folded, fold_schema.go), a key that is its own fold (key_folded
// NULL) matches on itself (the natural key's index). The values are
// folded, so the second arm is exact: such a key equals a folded value
// only if its fold does.
func appendFoldedKeyLookup(b *strings.Builder, args []any, c *domain.Condition) []any {
	list := func() {
		b.WriteString(" IN (")
		for i, v := range c.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("?")
			args = append(args, domain.FoldCase(v.Text))
		}
		b.WriteString(")")
	}
	// Each arm repeats the live rows' condition of both indexes, which
	// SQLite needs to see within an arm to use a partial index for it.
	b.WriteString("((key_folded")
	list()
	b.WriteString(" AND date_deleted IS NULL) OR (key_folded IS NULL AND key")
	list()
	b.WriteString(" AND date_deleted IS NULL))")
	return args
}

// mergedFoldedKeyLookup returns, when f is an Any whose members are all
// $eqL or $inL on key, the one $inL of all their values, which means the
// same: the databases turn an OR of $eq on key into one IN, but not an OR
// of appendFoldedKeyLookup's two arms, whose count would grow with the
// members (49 of them cost SQLite 6× their plain form; docs/benchmarks.md,
// "Case-insensitive operators").
func mergedFoldedKeyLookup(f domain.Filter) (domain.Condition, bool) {
	if f.Kind != domain.FilterAny || len(f.Subs) < 2 {
		return domain.Condition{}, false
	}
	merged := domain.Condition{Field: domain.FieldKey, Op: domain.OpIn, Fold: true}
	seen := map[string]bool{}
	for _, s := range f.Subs {
		c := s.Cond
		if s.Kind != domain.FilterCond || !c.Fold || c.Field != domain.FieldKey || (c.Op != domain.OpEq && c.Op != domain.OpIn) {
			return domain.Condition{}, false
		}
		for _, v := range c.Values {
			if k := domain.FoldCase(v.Text); !seen[k] {
				seen[k] = true
				merged.Values = append(merged.Values, domain.QueryValue{Text: k})
			}
		}
	}
	return merged, true
}
