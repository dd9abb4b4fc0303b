package readcache

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// modes are the two ways a watch tells the file's state: the WAL-index
// header, and rounds that ask the data version.
var modes = []struct {
	name   string
	rounds bool
}{{"header", false}, {"data version", true}}

// openFile returns a watch of a new SQLite file in WAL mode and a plain
// pool of the same file, which writes. With rounds, the watch asks the
// data version only.
func openFile(t testing.TB, rounds bool) (*Watch, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	db := openPool(t, path)
	if _, err := db.Exec("CREATE TABLE t (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite.NewConnector(fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatch(conn)
	w.rounds = rounds
	t.Cleanup(func() { _ = w.Close() })
	return w, db
}

func fileURI(path string) string { return "file:" + path + "?_journal_mode=WAL&_busy_timeout=5000" }

// openPool returns a pool of the SQLite file at path, in WAL mode.
func openPool(t testing.TB, path string) *sql.DB {
	t.Helper()
	conn, err := sqlite.NewConnector(fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestWatchSeesEveryCommit: the state changes with every commit of
// another connection, and only then; the header is read once the watch's
// connection is open, and rounds are asked otherwise.
func TestWatchSeesEveryCommit(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w, db := openFile(t, m.rounds)
			ctx := t.Context()
			// The first question connects; the header is read after it.
			if _, err := w.Now(ctx); err != nil {
				t.Fatal(err)
			}
			prev, err := w.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				again, err := w.Now(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if again.State != prev.State || again.Seq < prev.Seq || m.rounds && again.Seq == prev.Seq {
					t.Fatalf("unchanged file: %+v after %+v", again, prev)
				}
				if fromHeader := again.State.hdr != (header{}); fromHeader == m.rounds {
					t.Fatalf("state %+v read from the header: %v, want %v", again.State, fromHeader, !m.rounds)
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?)", i); err != nil {
					t.Fatal(err)
				}
				next, err := w.Now(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if next.State == again.State || next.Seq <= again.Seq {
					t.Fatalf("commit %d not seen: %+v after %+v", i, next, again)
				}
				prev = next
			}
		})
	}
}

// TestWatchAnswersReadersAfterCommits: readers that meet in rounds,
// reading a counter through a Cache while a writer raises it, never find
// a value older than the last commit acknowledged before they asked.
func TestWatchAnswersReadersAfterCommits(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			testReadersAfterCommits(t, m.rounds, func(ctx context.Context, db *sql.DB, acked *atomic.Int64) error {
				for i := int64(1); i <= 300; i++ {
					if _, err := db.ExecContext(ctx, "UPDATE t SET v = ?", i); err != nil {
						return err
					}
					acked.Store(i)
				}
				return nil
			})
		})
	}
}

// testReadersAfterCommits runs readers while write raises the counter of
// t from 0 to 300, storing in acked each value whose commit returned.
func testReadersAfterCommits(t *testing.T, rounds bool, write func(context.Context, *sql.DB, *atomic.Int64) error) {
	w, db := openFile(t, rounds)
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (0)"); err != nil {
		t.Fatal(err)
	}
	c := New(1<<20, func(int64) int { return 8 })
	var acked atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := write(ctx, db, &acked); err != nil {
			t.Error(err)
			acked.Store(300)
		}
	})
	for range 8 {
		wg.Go(func() {
			for acked.Load() < 300 {
				least := acked.Load()
				s, err := w.Now(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				v, ok := c.Get(s, "v")
				if !ok {
					if err := db.QueryRowContext(ctx, "SELECT v FROM t").Scan(&v); err != nil {
						t.Error(err)
						return
					}
					c.Put(s, "v", v)
				}
				if v < least {
					t.Errorf("read %d after commit %d was acknowledged (cached: %v)", v, least, ok)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestWatchAfterCloseFails: a closed watch answers an error, which sends
// readers to the database.
func TestWatchAfterCloseFails(t *testing.T) {
	w, _ := openFile(t, false)
	if _, err := w.Now(t.Context()); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if _, err := w.Now(t.Context()); err == nil {
		t.Fatal("a closed watch answered")
	}
}

func BenchmarkWatchNow(b *testing.B) {
	w, _ := openFile(b, false)
	ctx := context.Background()
	for b.Loop() {
		if _, err := w.Now(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWatchNowParallel is many readers, each with some work of its
// own between two reads, as requests are; questions/op is how many
// questions the file was asked per read.
func BenchmarkWatchNowParallel(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) { benchmarkNowParallel(b, m.rounds) })
	}
}

func benchmarkNowParallel(b *testing.B, rounds bool) {
	w, _ := openFile(b, rounds)
	ctx := context.Background()
	b.SetParallelism(32)
	cpu0 := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		var sink [64]byte
		for pb.Next() {
			for i := range 2000 {
				sink[i%64] += byte(i)
			}
			if _, err := w.Now(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	w.mu.Lock()
	b.ReportMetric(float64(w.seq)/float64(b.N), "questions/op")
	w.mu.Unlock()
}

// cpuTime is the CPU time the process has used, which a loaded machine
// does not inflate as it does wall time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
