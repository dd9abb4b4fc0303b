package bunstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/ports"
)

// BenchmarkReplayOneUser is the replay of a resuming owner's stream: one
// user's 100 changes, spread among other users' changes, read with
// ChangesOf in one page of 500 (application's replay page). Its cost must
// not grow with the others' write volume: compare others=1000 with
// others=100000. "scan" is what the replay did before ChangesOf: every
// change of the range, read in pages of 500 and filtered in Go.
//
//	go test -tags nomsgpack,grpcnotrace -run '^$' -bench ReplayOneUser -benchtime 200x ./adapters/bunstore/
func BenchmarkReplayOneUser(b *testing.B) {
	const mine = 100
	for _, be := range benchBackends(b) {
		for _, others := range []int{1000, 100000} {
			b.Run(fmt.Sprintf("%s/others=%d", be.name, others), func(b *testing.B) {
				db := be.open(b)
				ctx := context.Background()
				user, head := seedChanges(b, db, mine, others)
				l := NewChangeLog(db)
				q := ports.ChangeQuery{Entity: "bench_cache", AssigneeID: user, Upto: head, Limit: 500}
				b.Run("ChangesOf", func(b *testing.B) {
					for b.Loop() {
						page, err := l.ChangesOf(ctx, q)
						if err != nil || len(page) != mine {
							b.Fatalf("ChangesOf = %d changes, %v; want %d", len(page), err, mine)
						}
					}
				})
				if others > 1000 {
					return // the scan of 100 000 changes takes seconds a round
				}
				b.Run("scan", func(b *testing.B) {
					for b.Loop() {
						n, after := 0, int64(0)
						for {
							page, err := l.Changes(ctx, after, 500)
							if err != nil {
								b.Fatal(err)
							}
							if len(page) == 0 {
								break
							}
							for _, c := range page {
								if c.Entry.AssigneeID == user {
									n++
								}
							}
							after = page[len(page)-1].Rev
						}
						if n != mine {
							b.Fatalf("scan found %d changes, want %d", n, mine)
						}
					}
				})
			})
		}
	}
}

// seedChanges writes mine changes of one user spread evenly among others
// changes of 1000 other users straight into the log (the triggers' work is
// not what is measured) and returns the user and the head.
func seedChanges(b *testing.B, db *DB, mine, others int) (string, int64) {
	b.Helper()
	ctx := context.Background()
	user := "0195f3a4-0000-7000-8000-00000000beef"
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	total := mine + others
	every := total / mine
	const batch = 200
	for start := 0; start < total; start += batch {
		var sb strings.Builder
		sb.WriteString("INSERT INTO " + changesTable + " (" + changeColumns + ", at) VALUES ")
		var args []any
		for i := start; i < min(start+batch, total); i++ {
			if i > start {
				sb.WriteString(", ")
			}
			sb.WriteString("('bench_cache', 'created', ?, ?, 't', ?, '{\"v\":1}', 1, ?, ?, NULL, NULL, ?)")
			assignee := fmt.Sprintf("0195f3a4-0000-7000-8000-%012d", i%1000)
			if i%every == 0 && i/every < mine {
				assignee = user
			}
			args = append(args, fmt.Sprintf("id-%d", i), fmt.Sprintf("key-%d", i), assignee, engine.TimeArg(at), engine.TimeArg(at), engine.TimeArg(at))
		}
		if _, err := db.sql.ExecContext(ctx, sb.String(), args...); err != nil {
			b.Fatalf("seed changes: %v", err)
		}
	}
	if onPostgres(db) {
		if _, err := db.sql.ExecContext(ctx, "ANALYZE "+changesTable); err != nil {
			b.Fatal(err)
		}
	}
	head, err := NewChangeLog(db).Head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return user, head
}
