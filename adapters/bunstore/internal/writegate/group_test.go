package writegate

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
)

// TestGroupSubjournalInMemory: the writes of a group run with the
// sub-journal in memory (temp_store=MEMORY), and the connection has the
// default back once the group committed.
func TestGroupSubjournalInMemory(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "g.db")+"?_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	sqldb.SetMaxOpenConns(1) // the group's connection is the one read after it
	db := bun.NewDB(sqldb, sqlitedialect.New())
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	tempStore := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) int {
		t.Helper()
		var n int
		if err := q.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var inGroup []int
	w := Write{DB: db, Fn: func(ctx context.Context, tx bun.IDB) error {
		inGroup = append(inGroup, tempStore(tx))
		_, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (1)")
		return err
	}}
	answers, err := commitWrites(ctx, []batch.Job[Write]{{Ctx: ctx, Work: w}, {Ctx: ctx, Work: w}})
	if err != nil || answers[0] != nil || answers[1] != nil {
		t.Fatalf("commitWrites = %v, %v", answers, err)
	}
	if len(inGroup) != 2 || inGroup[0] != 2 || inGroup[1] != 2 {
		t.Errorf("temp_store within the group = %v, want 2 (MEMORY) for each write", inGroup)
	}
	if n := tempStore(db); n != 0 {
		t.Errorf("temp_store after the group = %d, want 0 (DEFAULT)", n)
	}
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&rows); err != nil || rows != 2 {
		t.Errorf("rows = %d, %v; want 2", rows, err)
	}
}
