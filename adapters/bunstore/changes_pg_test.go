package bunstore

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// txRepo is the repository of table writing through tx, directly.
func txRepo(tx bun.Tx, table string) *CacheRepository {
	r := &CacheRepository{db: tx, table: bun.Ident(table), bounds: fillBounds(bound.Bounds{}), eng: engine.Postgres(schemaNames)}
	r.writer = directWriter{r: r}
	return r
}

// TestChangeLogPostgresOverlappingTransactions interleaves two writers so
// that the later revision commits first. Neither the log nor a feed
// subscriber may hand out the later one before the earlier has committed;
// then both come, in revision order, and resuming from the later one does
// not skip the earlier (it was delivered before it).
func TestChangeLogPostgresOverlappingTransactions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openTestDB(t, pgtest.New(t))
	const table = "entries"
	if err := Migrate(ctx, db, []string{table}); err != nil {
		t.Fatal(err)
	}
	log := NewChangeLog(db)
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: system.Clock{}, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	assignments, err := application.NewAssignments(application.Assignment{Name: "a", EntityKey: "a", Table: table,
		Repo: NewCacheRepository(db, table), Policy: domain.PolicyAuthenticated})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := application.NewCacheOperations(application.CacheConfig{Assignments: assignments, Clock: system.Clock{},
		IDs: system.UUIDv7{}, Feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := ops.Watch.Execute(ctx, application.WatchCachesInput{Assignment: "a", Actor: domain.System()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	// Writer A draws the lower revision and stays open.
	txA, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = txA.Rollback() }()
	eA, eB := testEntry(1), testEntry(2)
	if err := txRepo(txA, table).Create(ctx, eA, testNow, domain.Quota{}); err != nil {
		t.Fatal(err)
	}
	// Writer B draws the higher revision and commits first.
	txB, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := txRepo(txB, table).Create(ctx, eB, testNow, domain.Quota{}); err != nil {
		t.Fatal(err)
	}
	if err := txB.Commit(); err != nil {
		t.Fatal(err)
	}
	// B's change is visible in the table, yet nothing may be handed out.
	var visible int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+changesTable).Scan(&visible); err != nil || visible != 1 {
		t.Fatalf("visible changes = %d, %v; want B's alone", visible, err)
	}
	for range 3 {
		got, err := log.Changes(ctx, 0, 10)
		if err != nil || len(got) != 0 {
			t.Fatalf("Changes while A is open = %v, %v; want none", revs(got), err)
		}
	}
	wait, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	ev, err := sub.Next(wait)
	cancel()
	if err == nil {
		t.Fatalf("subscriber got rev %d (%s) while the lower revision was in flight", ev.Change.Rev, ev.Change.Entry.ID)
	}

	if err := txA.Commit(); err != nil {
		t.Fatal(err)
	}
	var got []domain.Change
	for len(got) < 2 {
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		ev, err := sub.Next(wait)
		cancel()
		if err != nil {
			t.Fatalf("after A committed: %v (got %v)", err, revs(got))
		}
		got = append(got, ev.Change)
	}
	if got[0].Entry.ID != eA.ID || got[1].Entry.ID != eB.ID || got[0].Rev >= got[1].Rev {
		t.Fatalf("delivered %s@%d then %s@%d; want A's lower revision first", got[0].Entry.ID, got[0].Rev, got[1].Entry.ID, got[1].Rev)
	}
	// A subscriber resuming from A's revision gets B's; from B's, nothing
	// was skipped because A's came first.
	since := got[0].Rev
	resumed, err := ops.Watch.Execute(ctx, application.WatchCachesInput{Assignment: "a", Actor: domain.System(), Since: &since})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	wait, cancel = context.WithTimeout(ctx, 5*time.Second)
	ev, err = resumed.Next(wait)
	cancel()
	if err != nil || ev.Change.Rev != got[1].Rev {
		t.Fatalf("resume after %d: rev %d, %v; want %d", since, ev.Change.Rev, err, got[1].Rev)
	}
}

func revs(cs []domain.Change) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.Rev
	}
	return out
}
