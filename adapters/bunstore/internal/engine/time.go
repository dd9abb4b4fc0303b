package engine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/cachegate/cachegate/domain"
)

// Times: PostgreSQL stores them as timestamptz, SQLite as INTEGER
// microseconds since the Unix epoch, UTC (sqlite.go says why). Bun's
// queries pass them as TimeArg, prepared statements as the engine's Time;
// both write the form of the database at hand, and NullTime scans either.

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
