package bunstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
)

// The bounds of one page of a list (CacheRepository.List). A page holds
// at most listPageRowsMax rows and stops reading once its entries hold
// listPageBytes (so at most that plus one entry, 250 KiB by default). The
// first page asks for listFirstPageRows, which covers a default page of
// typical entries in one statement; each next page asks for as many rows
// of the last page's average size as fit in listPageBytes.
const (
	listPageBytes     = 1 << 20
	listPageRowsMax   = 1000
	listFirstPageRows = 100
)

// entryOverhead is what an entry costs in a page besides its text and
// data: the struct, its times and the slices' headers.
const entryOverhead = 128

// pager walks a list page by page.
type pager struct {
	left, offset      int
	rows              int
	maxRows, maxBytes int
	rowRead           func(context.Context)
	page              []domain.Entry
	bytes             int
	// more is set when the last page stopped at its LIMIT or its bytes,
	// so rows may follow it.
	more bool
	// after is the last row of the last page: the next starts after it.
	after *domain.Entry
}

func (r *CacheRepository) newPager(limit, offset int) *pager {
	p := &pager{left: limit, offset: max(offset, 0), maxRows: positive(r.paging.rows, listPageRowsMax),
		maxBytes: positive(r.paging.bytes, listPageBytes), rowRead: r.paging.rowRead}
	p.rows = min(listFirstPageRows, p.maxRows)
	p.page = make([]domain.Entry, 0, min(limit, p.rows))
	return p
}

// statement returns the next page's statement: the list's condition, the
// keyset condition after the last page, the order, the page's LIMIT, and
// the caller's offset on the first page.
func (p *pager) statement(cond string, args []any, keys []domain.SortKey, order string) (string, []any, error) {
	var b strings.Builder
	qargs := append(make([]any, 0, len(args)+2*len(keys)+4), args...)
	b.WriteString("SELECT " + cacheColumns + " FROM ? WHERE " + cond)
	if p.after != nil {
		after, aargs, err := afterCondition(keys, p.after)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(" AND (" + after + ")")
		qargs = append(qargs, aargs...)
	}
	b.WriteString(" ORDER BY " + order + " LIMIT ?")
	qargs = append(qargs, min(p.left, p.rows))
	if p.offset > 0 {
		b.WriteString(" OFFSET ?")
		qargs = append(qargs, p.offset)
	}
	return b.String(), qargs, nil
}

// read runs the page's statement and keeps its rows, stopping at the
// page's bytes. It may run again for the same page (a transient failure):
// it starts the page afresh.
func (p *pager) read(ctx context.Context, db bun.IDB, query string, args []any) error {
	p.page, p.bytes, p.more = p.page[:0], 0, false
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return err
		}
		p.page = append(p.page, e)
		p.bytes += entryOverhead + len(e.ID) + len(e.Key) + len(e.Type) + len(e.AssigneeID) + len(e.Data)
		if p.rowRead != nil {
			p.rowRead(ctx)
		}
		if p.bytes >= p.maxBytes {
			p.more = true
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	p.more = len(p.page) == min(p.left, p.rows)
	return nil
}

// yield hands the page's entries to fn (the connection is back in the
// pool by then) and prepares the next page; it reports whether there may
// be one.
func (p *pager) yield(fn func(domain.Entry) error) (bool, error) {
	n := len(p.page)
	if n == 0 {
		return false, nil
	}
	last := p.page[n-1]
	p.after = &last
	p.left -= n
	p.offset = 0
	p.rows = min(max(p.maxBytes/max(p.bytes/n, 1), 1), p.maxRows)
	for i := range p.page {
		if err := fn(p.page[i]); err != nil {
			return false, err
		}
		p.page[i] = domain.Entry{} // let its data go before the next page
	}
	return p.more && p.left > 0, nil
}

// afterCondition returns the condition of the rows that come after e in
// the order listOrder(keys) writes, with its arguments: for keys k1…kn
// and the id, (k1 after) OR (k1 = AND k2 after) OR … OR (k1 = AND … AND
// kn = AND id > e.id). "After" follows each key's direction and, for the
// expiry, NULLS LAST ascending and NULLS FIRST descending: after a NULL
// ascending nothing is, after a NULL descending every date is. When every
// key ascends and none can be NULL, the same is one row-value comparison,
// (k1, …, kn, id) > (…), which both databases answer with a range of an
// index on those columns.
func afterCondition(keys []domain.SortKey, e *domain.Entry) (string, []any, error) {
	type key struct {
		col    string
		desc   bool
		val    any
		isNull bool
	}
	ks := make([]key, 0, len(keys)+1)
	simple := true
	for _, k := range keys {
		col, ok := queryColumns[k.Field]
		if !ok {
			return "", nil, fmt.Errorf("bunstore: list entries: unknown sort field %s", strconv.Itoa(int(k.Field)))
		}
		val, isNull := sortValue(k.Field, e)
		ks = append(ks, key{col: col, desc: k.Desc, val: val, isNull: isNull})
		simple = simple && !k.Desc && !k.Field.Nullable()
	}
	ks = append(ks, key{col: "id", val: e.ID})
	var (
		b    strings.Builder
		args []any
	)
	if simple {
		cols := make([]string, len(ks))
		for i, k := range ks {
			cols[i] = k.col
			args = append(args, k.val)
		}
		return "(" + strings.Join(cols, ", ") + ") > (" + placeholders(len(ks)) + ")", args, nil
	}
	terms := 0
	for i, k := range ks {
		var after string
		switch {
		case k.isNull && k.desc:
			after = k.col + " IS NOT NULL"
		case k.isNull:
			continue // nothing sorts after a NULL ascending
		case k.desc:
			after = k.col + " < ?"
		case k.col == "expires_at":
			after = "(" + k.col + " > ? OR " + k.col + " IS NULL)"
		default:
			after = k.col + " > ?"
		}
		if terms > 0 {
			b.WriteString(" OR ")
		}
		terms++
		b.WriteString("(")
		for _, eq := range ks[:i] {
			if eq.isNull {
				b.WriteString(eq.col + " IS NULL AND ")
			} else {
				b.WriteString(eq.col + " = ? AND ")
				args = append(args, eq.val)
			}
		}
		b.WriteString(after + ")")
		if !k.isNull {
			args = append(args, k.val)
		}
	}
	return b.String(), args, nil
}

// sortValue returns e's value of a sort field as a query argument, and
// whether it is NULL.
func sortValue(f domain.QueryField, e *domain.Entry) (any, bool) {
	switch f {
	case domain.FieldID:
		return e.ID, false
	case domain.FieldKey:
		return e.Key, false
	case domain.FieldType:
		return e.Type, false
	case domain.FieldAssigneeID:
		return e.AssigneeID, false
	case domain.FieldVersion:
		return e.Version, false
	case domain.FieldDateCreated:
		return engine.TimeArg(e.DateCreated), false
	case domain.FieldDateUpdated:
		return engine.TimeArg(e.DateUpdated), false
	case domain.FieldExpirationDate:
		if e.ExpiresAt == nil {
			return nil, true
		}
		return engine.TimeArg(*e.ExpiresAt), false
	}
	return nil, true
}
