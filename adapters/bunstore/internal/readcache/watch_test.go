package readcache

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"
)

// openFile returns a watch of a new SQLite file in WAL mode and a plain
// pool of the same file, which writes.
func openFile(t testing.TB) (*Watch, *sql.DB) {
	t.Helper()
	uri := "file:" + filepath.Join(t.TempDir(), "w.db") + "?_journal_mode=WAL&_busy_timeout=5000"
	conn, err := sqlite.NewConnector(uri)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec("CREATE TABLE t (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	w := NewWatch(conn)
	t.Cleanup(func() { _ = w.Close() })
	return w, db
}

// TestWatchSeesEveryCommit: the state changes with every commit of
// another connection, and only then.
func TestWatchSeesEveryCommit(t *testing.T) {
	w, db := openFile(t)
	ctx := t.Context()
	prev, err := w.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		again, err := w.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if again.State != prev.State || again.Seq <= prev.Seq {
			t.Fatalf("unchanged file: %+v after %+v", again, prev)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
		next, err := w.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if next.State == again.State {
			t.Fatalf("commit %d not seen: state %+v", i, next.State)
		}
		prev = next
	}
}

// TestWatchAfterCloseFails: a closed watch answers an error, which sends
// readers to the database.
func TestWatchAfterCloseFails(t *testing.T) {
	w, _ := openFile(t)
	if _, err := w.Now(t.Context()); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if _, err := w.Now(t.Context()); err == nil {
		t.Fatal("a closed watch answered")
	}
}

func BenchmarkWatchNow(b *testing.B) {
	w, _ := openFile(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := w.Now(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
