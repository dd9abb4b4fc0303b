package bunstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// List implements ports.CacheRepository. The rows are read in pages
// (cache_page.go), each one statement and one bounded call (listStatement)
// on a connection given back before the page's entries are yielded; the
// next page starts after the last row's sort values and id (keyset). The
// pages, and the total, are separate statements, so a list is not one
// snapshot. ARCHITECTURE.md, "Lists and the query language" (Streaming).
func (r *CacheRepository) List(ctx context.Context, q ports.ListQuery, now time.Time, yield func(domain.Entry) error) (ports.ListResult, error) {
	cond, args, err := listWhere(r.eng, r.table, q, now)
	if err != nil {
		return ports.ListResult{}, err
	}
	var res ports.ListResult
	if q.CountTotal {
		err := r.listStatement(ctx, func(ctx context.Context, db bun.IDB) error {
			return db.QueryRowContext(ctx, "SELECT count(*) FROM ? WHERE "+cond, args...).Scan(&res.Total)
		})
		if err != nil {
			return ports.ListResult{}, dberr.Wrap("count entries", err)
		}
	}
	if q.Limit <= 0 {
		return res, nil
	}
	keys := sortKeys(q.Sort)
	order, err := listOrder(keys)
	if err != nil {
		return ports.ListResult{}, err
	}
	pages := r.newPager(q.Limit, q.Offset)
	for {
		query, qargs, err := pages.statement(cond, args, keys, order)
		if err != nil {
			return ports.ListResult{}, err
		}
		err = r.listStatement(ctx, func(ctx context.Context, db bun.IDB) error {
			return pages.read(ctx, db, query, qargs)
		})
		if err != nil {
			return ports.ListResult{}, dberr.Wrap("list entries", err)
		}
		more, err := pages.yield(yield)
		if err != nil || !more {
			return res, err
		}
	}
}

// listStatement runs fn, one statement of a list (the count or a page),
// as one bounded call (README, "Fair share of the database";
// bound.Bounds.Enter: the repository's timeout, the caller's place): it
// takes a connection for fn alone, runs fn under the query bound
// (bound.Bounds.Query) and gives the connection back when fn returns.
func (r *CacheRepository) listStatement(ctx context.Context, fn func(ctx context.Context, db bun.IDB) error) (err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	conn, err := r.handle.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return dberr.WithRetry(ctx, func() error { return r.eng.BoundQuery(ctx, r.bounds.Query, conn, fn) })
}

// listWhere returns the WHERE condition of q, with its arguments (the
// first is the table, for the FROM clause the caller writes before it).
// The access policy's owner and the liveness test come first and the
// caller's filter is ANDed after them, in parentheses: nothing in the
// filter can widen them. Every value is an argument, never SQL text.
func listWhere(eng engine.Engine, table bun.Ident, q ports.ListQuery, now time.Time) (string, []any, error) {
	var b strings.Builder
	args := []any{table, engine.TimeArg(now)}
	b.WriteString(liveAt)
	if q.Owner != "" {
		b.WriteString(" AND assignee_id = ?")
		args = append(args, q.Owner)
	}
	if !q.Filter.IsAll() {
		b.WriteString(" AND (")
		var err error
		if args, err = appendFilter(&b, args, eng, q.Filter); err != nil {
			return "", nil, err
		}
		b.WriteString(")")
	}
	return b.String(), args, nil
}

// appendFilter writes f as SQL to b and returns args with f's values.
func appendFilter(b *strings.Builder, args []any, eng engine.Engine, f domain.Filter) ([]any, error) {
	switch f.Kind {
	case domain.FilterCond:
		return appendCondition(b, args, eng, &f.Cond)
	case domain.FilterAll, domain.FilterAny:
		sep, empty := " AND ", "1 = 1"
		if f.Kind == domain.FilterAny {
			sep, empty = " OR ", "1 = 0"
		}
		if len(f.Subs) == 0 {
			b.WriteString(empty)
			return args, nil
		}
		if c, ok := mergedFoldedKeyLookup(f); ok {
			return appendFoldedKeyLookup(b, args, &c), nil
		}
		for i, s := range f.Subs {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString("(")
			var err error
			if args, err = appendFilter(b, args, eng, s); err != nil {
				return nil, err
			}
			b.WriteString(")")
		}
		return args, nil
	}
	return nil, fmt.Errorf("bunstore: unknown filter kind %d", f.Kind)
}

// appendCondition writes one condition. Text operators never use LIKE,
// whose case rules differ between the databases (SQLite's ignores ASCII
// case) and whose wildcards would need escaping: $starts and $ends compare
// a substr() of the column, $cont and $excl find the value with instr()
// (SQLite) or strpos() (PostgreSQL). Character positions count the same
// on both. The L forms compare the folded column (foldedColumn) with the
// value folded in Go by the same mapping.
func appendCondition(b *strings.Builder, args []any, eng engine.Engine, c *domain.Condition) ([]any, error) {
	col, ok := queryColumns[c.Field]
	if !ok {
		return nil, fmt.Errorf("bunstore: unknown query field %d", c.Field)
	}
	if c.Fold && c.Field == domain.FieldKey && (c.Op == domain.OpEq || c.Op == domain.OpIn) {
		return appendFoldedKeyLookup(b, args, c), nil
	}
	if c.Fold {
		col = foldedColumn(c.Field, col)
	}
	val := func(i int) any {
		v := c.Values[i]
		switch c.Field.Kind() {
		case domain.KindInteger:
			return v.Int
		case domain.KindTime:
			return engine.TimeArg(v.Time)
		}
		if c.Fold {
			return domain.FoldCase(v.Text)
		}
		return v.Text
	}
	position := eng.PositionFunction()
	switch c.Op {
	case domain.OpEq, domain.OpNe, domain.OpGt, domain.OpLt, domain.OpGte, domain.OpLte:
		b.WriteString(col + comparators[c.Op] + "?")
		args = append(args, val(0))
	case domain.OpBetween:
		b.WriteString(col + " BETWEEN ? AND ?")
		args = append(args, val(0), val(1))
	case domain.OpIn, domain.OpNotIn:
		b.WriteString(col)
		if c.Op == domain.OpNotIn {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (" + placeholders(len(c.Values)) + ")")
		for i := range c.Values {
			args = append(args, val(i))
		}
	case domain.OpStarts:
		v := val(0).(string)
		b.WriteString("substr(" + col + ", 1, ?) = ?")
		args = append(args, utf8.RuneCountInString(v), v)
	case domain.OpEnds:
		v := val(0).(string)
		n := utf8.RuneCountInString(v)
		// substr() with a start below 1 means different things on the
		// two databases; the length test keeps the start at 1 or more.
		b.WriteString("length(" + col + ") >= ? AND substr(" + col + ", length(" + col + ") - ? + 1) = ?")
		args = append(args, n, n, v)
	case domain.OpCont:
		b.WriteString(position + "(" + col + ", ?) > 0")
		args = append(args, val(0))
	case domain.OpExcl:
		b.WriteString(position + "(" + col + ", ?) = 0")
		args = append(args, val(0))
	case domain.OpIsNull:
		b.WriteString(col + " IS NULL")
	case domain.OpNotNull:
		b.WriteString(col + " IS NOT NULL")
	default:
		return nil, fmt.Errorf("bunstore: unknown query operator %d", c.Op)
	}
	return args, nil
}

// sortKeys returns the sort keys of a list: keys, or dateCreated
// ascending when there are none.
func sortKeys(keys []domain.SortKey) []domain.SortKey {
	if len(keys) == 0 {
		return []domain.SortKey{{Field: domain.FieldDateCreated}}
	}
	return keys
}

// listOrder returns the ORDER BY list of keys (dateCreated when empty),
// ending with id ascending. A NULL expiry sorts after every date, so last
// ascending and first descending, on both databases. The keyset condition
// of a list's next page (afterCondition, cache_page.go) follows exactly
// this order.
func listOrder(keys []domain.SortKey) (string, error) {
	keys = sortKeys(keys)
	var b strings.Builder
	for _, k := range keys {
		col, ok := queryColumns[k.Field]
		if !ok {
			return "", fmt.Errorf("bunstore: list entries: unknown sort field %s", strconv.Itoa(int(k.Field)))
		}
		b.WriteString(col)
		switch {
		case k.Desc && k.Field.Nullable():
			b.WriteString(" DESC NULLS FIRST")
		case k.Desc:
			b.WriteString(" DESC")
		case k.Field.Nullable():
			b.WriteString(" ASC NULLS LAST")
		default:
			b.WriteString(" ASC")
		}
		b.WriteString(", ")
	}
	b.WriteString("id ASC")
	return b.String(), nil
}
