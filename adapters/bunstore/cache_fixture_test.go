package bunstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
)

// testNow is the instant the tests of this package read and write at.
var testNow = time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)

// testEntry returns a live entry numbered i.
func testEntry(i int) domain.Entry {
	return domain.Entry{
		ID:          fmt.Sprintf("0190a5c0-0000-7000-8000-%012d", i),
		Key:         fmt.Sprintf("key-%d", i),
		Type:        "type",
		AssigneeID:  fmt.Sprintf("a55194ee-0000-4000-8000-%012d", i%100),
		Data:        []byte(`{"value":"some cached text of a typical size","n":` + fmt.Sprint(i) + `}`),
		Version:     1,
		DateCreated: testNow,
		DateUpdated: testNow,
	}
}

// seed inserts n entries numbered from 0 into table with multi-row INSERTs
// in one transaction, expiring at expires (nil: never).
func seed(tb testing.TB, db *DB, table string, n int, expires time.Time) {
	tb.Helper()
	ctx := tb.Context()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	const batch = 500
	for from := 0; from < n; from += batch {
		var sb strings.Builder
		args := []any{bun.Ident(table)}
		sb.WriteString("INSERT INTO ? (id, key, type, assignee_id, data, version, date_created, date_updated, expires_at) VALUES ")
		for i := from; i < min(from+batch, n); i++ {
			if i > from {
				sb.WriteString(", ")
			}
			e := testEntry(i)
			sb.WriteString("(?, ?, ?, ?, ?, 1, ?, ?, ?)")
			var exp any
			if !expires.IsZero() {
				exp = engine.TimeArg(expires)
			}
			args = append(args, e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), engine.TimeArg(e.DateCreated), engine.TimeArg(e.DateUpdated), exp)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			tb.Fatalf("seed: %v", err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}
