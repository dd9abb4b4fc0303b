package engine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/cachegate/cachegate/domain"
)

// The forms both databases share:
//
//   - Times. PostgreSQL stores them as timestamptz. SQLite stores them as
//     INTEGER microseconds since the Unix epoch (UTC): an integer compares
//     correctly, indexes well and round-trips exactly the microsecond
//     precision domain.Normalize keeps, which text would only do at a fixed
//     width. Bun's queries pass times as TimeArg, prepared statements as
//     the engine's Time; both write the form of the database at hand, and
//     NullTime scans either.
//   - Text ordering. PostgreSQL text columns are declared COLLATE "C", so
//     ORDER BY and the indexes compare bytes, as SQLite's BINARY collation
//     and Go's string comparison do; lists sort the same on every store.
//   - Errors. Unique violations, busy and serialization errors come as
//     different types and codes; internal/dberr reads both.
//   - Purge batches (PurgeStatement): each batch takes the rows of two
//     index walks, soft-deleted rows in date_deleted order, then expired
//     rows in (assignee_id, expires_at) order, each on its partial index.
//     An index walk in order starts where the rows are, and the index
//     entries of rows an earlier batch removed are marked dead on the
//     first walk past them, so every batch of a long sweep costs about the
//     same. A scan of the table (SQLite's plan for the OR of the two
//     conditions; PostgreSQL's without statistics) or a bitmap of every
//     dead row (PostgreSQL's with them) instead costs in proportion to all
//     the rows still dead, or removed but not yet vacuumed: a sweep of a
//     backlog of a million rows then grows quadratic (measured on
//     PostgreSQL: the last batches read 22 000 pages each, and point reads
//     beside it queued for the CPU for over 100 ms). On PostgreSQL
//     purgePlan makes the planner walk the indexes whatever its statistics
//     say, and the batch is chosen FOR UPDATE SKIP LOCKED; on SQLite the
//     batch is a UNION ALL of the two walks.
//   - Migration lock. PostgreSQL takes a transaction-scoped advisory lock; SQLite's single
//     writer and idempotent DDL suffice (bunstore's migrate.go).
//   - Row and table locks (ForUpdate, LockTableForWriters): PostgreSQL
//     locks what a transaction reads or guards; SQLite's IMMEDIATE
//     transactions already hold the whole database.

// sqlTime is a time as a query argument, written in the form the dialect
// of the query stores times in. Its precision is the microsecond.
type sqlTime time.Time

var _ schema.QueryAppender = sqlTime{}

// AppendQuery implements schema.QueryAppender.
func (t sqlTime) AppendQuery(gen schema.QueryGen, b []byte) ([]byte, error) {
	tm := time.Time(t).UTC()
	if gen.Dialect().Name() == dialect.PG {
		return appendPGTime(b, tm), nil
	}
	return strconv.AppendInt(b, tm.UnixMicro(), 10), nil
}

// TimeArg returns t as a query argument.
func TimeArg(t time.Time) any { return sqlTime(t) }

// NullTimeArg returns t as a query argument: NULL when t is nil.
func NullTimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return sqlTime(*t)
}

// NullTime scans a time column of either dialect, NULL included. Times come
// back in UTC, truncated to the microsecond.
type NullTime struct {
	Time  time.Time
	Valid bool
}

// Scan implements sql.Scanner.
func (n *NullTime) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*n = NullTime{}
	case int64:
		*n = NullTime{Time: time.UnixMicro(v).UTC(), Valid: true}
	case time.Time:
		*n = NullTime{Time: domain.Normalize(v), Valid: true}
	default:
		return fmt.Errorf("bunstore: cannot scan %T as a time", v)
	}
	return nil
}

// Ptr returns the time, or nil for NULL.
func (n NullTime) Ptr() *time.Time {
	if !n.Valid {
		return nil
	}
	t := n.Time
	return &t
}
