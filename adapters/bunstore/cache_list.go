package bunstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// sortColumns maps each ports.SortField to its column.
var sortColumns = map[ports.SortField]string{
	ports.SortDateCreated: "date_created",
	ports.SortDateUpdated: "date_updated",
	ports.SortKey:         "key",
	ports.SortType:        "type",
}

// List implements ports.CacheRepository. Ties in the sort column are broken
// by id in the same direction. A Limit of zero or less returns no entries
// (with the total, when asked: a count-only query); a negative Offset counts
// as zero. The page and the total are two statements, so a write between
// them can make them disagree by that write.
func (r *CacheRepository) List(ctx context.Context, q ports.ListQuery, now time.Time) (_ ports.ListResult, err error) {
	ctx, done := r.bounds.enter(ctx)
	defer done(&err)
	col, ok := sortColumns[q.Sort]
	if !ok {
		return ports.ListResult{}, fmt.Errorf("bunstore: list entries: unknown sort field %d", q.Sort)
	}
	where := []string{liveAt}
	args := []any{r.table, timeArg(now)}
	for _, f := range []struct{ col, val string }{{"key", q.Key}, {"type", q.Type}, {"assignee_id", q.AssigneeID}} {
		if f.val != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.val)
		}
	}
	cond := strings.Join(where, " AND ")

	res := ports.ListResult{Entries: []domain.Entry{}}
	if q.CountTotal {
		err := withRetry(ctx, func() error {
			return r.db.QueryRowContext(ctx, "SELECT count(*) FROM ? WHERE "+cond, args...).Scan(&res.Total)
		})
		if err != nil {
			return ports.ListResult{}, dbError("count entries", err)
		}
	}
	if q.Limit <= 0 {
		return res, nil
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	query := "SELECT " + cacheColumns + " FROM ? WHERE " + cond +
		" ORDER BY " + col + dir + ", id" + dir + " LIMIT ? OFFSET ?"
	args = append(args, q.Limit, max(q.Offset, 0))
	err = withRetry(ctx, func() error {
		res.Entries = res.Entries[:0]
		rows, err := r.db.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanEntry(rows)
			if err != nil {
				return err
			}
			res.Entries = append(res.Entries, e)
		}
		return rows.Err()
	})
	if err != nil {
		return ports.ListResult{}, dbError("list entries", err)
	}
	return res, nil
}
