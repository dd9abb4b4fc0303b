package bunstore

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// queueCreates fills r's slots, starts n creates, create(0) to
// create(n-1), and waits until all of them queue. Freeing the slots
// (releaseSlots) then lets them be written as one batch. The function it
// returns waits for the creates and returns their errors, in order.
func queueCreates(t *testing.T, r *CacheRepository, n int, create func(i int) error) func() []error {
	t.Helper()
	b := r.createBatches()
	for range createBatchSlots {
		b.Slots() <- struct{}{}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = create(i) })
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		queued := b.Queued()
		if queued == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d creates queued", queued, n)
		}
	}
	return func() []error {
		wg.Wait()
		return errs
	}
}

// releaseSlots frees the slots queueCreates filled.
func releaseSlots(r *CacheRepository) {
	for range createBatchSlots {
		<-r.createBatches().Slots()
	}
}

func TestCreatesQueuedTogetherOnPostgresAnswerAsIfAlone(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, pgtest.New(t))
	r := migrateTable(t, db, "batch_cache")
	if r.createBatches() == nil {
		t.Fatal("a repository on PostgreSQL batches no creates")
	}
	ctx := t.Context()

	// Rows in the way: a live one holding an id, a live one holding a
	// natural key, and an expired one holding a natural key.
	holdsID, holdsKey, expired := testEntry(1000), testEntry(1001), testEntry(1002)
	past := testNow.Add(-time.Minute)
	expired.ExpiresAt = &past
	for _, e := range []domain.Entry{holdsID, holdsKey, expired} {
		if err := r.create(ctx, db.sql, e, testNow.Add(-time.Hour), domain.Quota{}, 0); err != nil {
			t.Fatal(err)
		}
	}

	var entries []domain.Entry
	var want []error
	add := func(e domain.Entry, err error) int {
		entries, want = append(entries, e), append(want, err)
		return len(entries) - 1
	}
	for i := range 20 {
		add(testEntry(i), nil)
	}
	// Two creates of one natural key, and two of one id: which of a pair
	// comes first in the queue is up to the scheduler, and the other meets
	// it as a conflict.
	sameKey := testEntry(20)
	sameKey.ID = testEntry(21).ID
	sameID := testEntry(22)
	sameID.ID = testEntry(23).ID
	pairs := []struct {
		a, b int
		err  error
	}{
		{add(testEntry(20), nil), add(sameKey, nil), domain.ErrCacheEntityAlreadyExists},
		{add(testEntry(23), nil), add(sameID, nil), domain.ErrCacheIDTaken},
	}
	takenID := testEntry(24)
	takenID.ID = holdsID.ID
	add(takenID, domain.ErrCacheIDTaken)
	takenKey := testEntry(25)
	takenKey.Key, takenKey.Type, takenKey.AssigneeID = holdsKey.Key, holdsKey.Type, holdsKey.AssigneeID
	add(takenKey, domain.ErrCacheEntityAlreadyExists)
	deadKey := testEntry(26)
	deadKey.Key, deadKey.Type, deadKey.AssigneeID = expired.Key, expired.Type, expired.AssigneeID
	add(deadKey, nil)
	gaveUp, cancel := context.WithCancel(ctx)
	add(testEntry(27), context.Canceled)
	wait := queueCreates(t, r, len(entries), func(i int) error {
		if i == len(entries)-1 {
			return r.Create(gaveUp, entries[i], testNow, domain.Quota{})
		}
		return r.Create(ctx, entries[i], testNow, domain.Quota{})
	})
	cancel()
	batched := r.batchedCreates.Load()
	releaseSlots(r)
	errs := wait()
	for _, p := range pairs {
		if errs[p.a] != nil {
			p.a, p.b = p.b, p.a
		}
		if errs[p.a] != nil || !errors.Is(errs[p.b], p.err) {
			t.Errorf("creates %d and %d: errs = %v and %v, want one success and %v", p.a, p.b, errs[p.a], errs[p.b], p.err)
		}
		want[p.b] = p.err
	}
	for i, err := range errs {
		if !errors.Is(err, want[i]) || (want[i] == nil) != (err == nil) {
			t.Errorf("create %d: err = %v, want %v", i, err, want[i])
		}
	}
	// 20, and the first of each pair; the others met a row in the way.
	if got := r.batchedCreates.Load() - batched; got != 22 {
		t.Fatalf("the batch wrote %d creates, want 22", got)
	}

	// Every create that succeeded is stored once, logged once and counted.
	created := 0
	for i, e := range entries {
		if want[i] != nil {
			continue
		}
		created++
		got, err := r.Get(ctx, e.ID, testNow)
		if err != nil || got.Key != e.Key || string(got.Data) != string(e.Data) {
			t.Errorf("entry %d: Get = %+v, %v; want the entry created", i, got, err)
		}
	}
	if _, err := r.Get(ctx, testEntry(27).ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("the create whose caller gave up: Get err = %v, want not found", err)
	}
	var logged int
	if err := db.sql.NewRaw("SELECT count(*) FROM "+changesTable+" WHERE entity = 'batch_cache' AND kind = 'created'").Scan(ctx, &logged); err != nil {
		t.Fatal(err)
	}
	if logged != created+3 {
		t.Errorf("the change log holds %d creations, want %d (3 made before the batch)", logged, created+3)
	}
	var live, counted int
	if err := db.sql.NewRaw("SELECT count(*) FROM batch_cache WHERE date_deleted IS NULL").Scan(ctx, &live); err != nil {
		t.Fatal(err)
	}
	if err := db.sql.NewRaw("SELECT coalesce(sum(entries), 0) FROM "+usageTable+" WHERE entity = 'batch_cache'").Scan(ctx, &counted); err != nil {
		t.Fatal(err)
	}
	if live != created+2 || counted != live {
		t.Errorf("%d live rows, %d counted; want %d of both", live, counted, created+2)
	}
}

func TestAFailedBatchOnPostgresFailsOnlyTheCreateThatBrokeIt(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, pgtest.New(t))
	r := migrateTable(t, db, "batch_cache")
	entries := make([]domain.Entry, 8)
	for i := range entries {
		entries[i] = testEntry(i)
	}
	// PostgreSQL's text holds no NUL byte: the statement fails.
	entries[3].Data = []byte("\"a\x00b\"")

	wait := queueCreates(t, r, len(entries), func(i int) error {
		return r.Create(t.Context(), entries[i], testNow, domain.Quota{})
	})
	batched := r.batchedCreates.Load()
	releaseSlots(r)
	for i, err := range wait() {
		if (i == 3) != (err != nil) {
			t.Errorf("create %d: err = %v", i, err)
		}
	}
	if got := r.batchedCreates.Load() - batched; got != 0 {
		t.Errorf("a failed batch wrote %d creates, want none", got)
	}
	for i, e := range entries {
		if _, err := r.Get(t.Context(), e.ID, testNow); (i == 3) != errors.Is(err, domain.ErrCacheNotFound) {
			t.Errorf("entry %d: Get err = %v", i, err)
		}
	}
}

func TestQueuedCreatesUnderAQuotaOnPostgresFillItExactly(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, pgtest.New(t))
	r := migrateTable(t, db, "batch_cache")
	ctx := t.Context()
	// testEntry(i) belongs to assignee i % 100: a holds 2 entries and gets
	// 5 more under a quota of 4; b gets 4 under a quota of 10; c gets 2
	// without one.
	a := func(i int) domain.Entry { return testEntry(100*i + 1) }
	for i := range 2 {
		if err := r.create(ctx, db.sql, a(i), testNow, domain.Quota{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	type create struct {
		e domain.Entry
		q domain.Quota
	}
	var creates []create
	for i := 2; i < 7; i++ {
		creates = append(creates, create{a(i), domain.Quota{MaxEntries: 4}})
	}
	for i := range 4 {
		creates = append(creates, create{testEntry(100*i + 2), domain.Quota{MaxEntries: 10}})
	}
	for i := range 2 {
		creates = append(creates, create{testEntry(100*i + 3), domain.Quota{}})
	}

	wait := queueCreates(t, r, len(creates), func(i int) error {
		return r.Create(ctx, creates[i].e, testNow, creates[i].q)
	})
	batched := r.batchedCreates.Load()
	releaseSlots(r)
	errs := wait()

	refused := 0
	for i, err := range errs {
		switch {
		case i < 5 && errors.Is(err, domain.ErrCacheQuotaExceeded):
			refused++
		case err != nil:
			t.Errorf("create %d: err = %v", i, err)
		}
	}
	if refused != 3 {
		t.Errorf("%d of a's 5 creates were refused, want 3 (2 places left)", refused)
	}
	if got := r.batchedCreates.Load() - batched; got != 6 {
		t.Errorf("the batch wrote %d creates, want b's 4 and c's 2", got)
	}
	var counts []int
	if err := db.sql.NewRaw("SELECT sum(entries) FROM "+usageTable+" WHERE entity = 'batch_cache' GROUP BY assignee_id ORDER BY assignee_id").
		Scan(ctx, &counts); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(counts, []int{4, 4, 2}) {
		t.Errorf("counts of a, b and c = %v, want [4 4 2]", counts)
	}
}

func TestAFailedBatchRunsItsCreatesAloneOnlyWhenNothingCommitted(t *testing.T) {
	t.Parallel()
	past, cancel := context.WithTimeoutCause(context.Background(), 0, dberr.ErrPastBound)
	defer cancel()
	<-past.Done()
	for _, c := range []struct {
		name  string
		ctx   context.Context
		err   error
		alone bool
		want  error
	}{
		{"a statement PostgreSQL refused", t.Context(), &pgconn.PgError{Code: "22021"}, true, nil},
		{"a read-only standby", t.Context(), &pgconn.PgError{Code: dberr.PGReadOnlyTransaction}, false, domain.ErrDatabaseUnavailable},
		{"a full disk", t.Context(), &pgconn.PgError{Code: dberr.PGDiskFull}, false, domain.ErrStorageFull},
		{"a connection lost under it", t.Context(), io.ErrUnexpectedEOF, false, domain.ErrDatabaseUnavailable},
		{"the bound passed", past, context.DeadlineExceeded, false, domain.ErrDatabaseUnavailable},
		{"anything else", t.Context(), errors.New("boom"), false, nil},
	} {
		got := dberr.BatchFailure(c.ctx, "create entries", c.err)
		if dberr.BatchOutage(got) == c.alone || got == nil || (c.want != nil && !errors.Is(got, c.want)) {
			t.Errorf("%s: dberr.BatchFailure = %v, want alone %v, %v", c.name, got, c.alone, c.want)
		}
	}
}
