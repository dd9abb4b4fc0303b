package bunstore

import (
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// Case folding for the L operators ($contL, $eqL, …) must give the same
// answers on SQLite, on PostgreSQL and in memstore, and neither database's
// own lower() does (SQLite's folds ASCII only, PostgreSQL's follows the
// collation). So every fold is domain.FoldCase's mapping and nothing else:
//
//   - key and type are folded in Go when a row is written, into
//     key_folded and type_folded (fold_schema.go), so a query folds
//     nothing per row;
//   - id and assignee_id, UUIDs stored in lower case, go through
//     foldFunction: on SQLite the Go function registered with the driver,
//     on PostgreSQL an SQL function that Migrate redefines at every start,
//     translating what unicode.ToLower changes in the running binary.
const foldFunction = "cachegate_fold"

// foldedColumn returns the SQL of the folded form of field, whose column
// is col: the stored folded key or type, else foldFunction of col.
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
		b.WriteString(" IN (" + placeholders(len(c.Values)) + ")")
		for _, v := range c.Values {
			args = append(args, domain.FoldCase(v.Text))
		}
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
// members (docs/benchmarks.md, "Case-insensitive operators").
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
