package bunstore

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/cachegate/cachegate/domain"
)

// queueWhileHoldingTheGate holds db's write gate, starts one goroutine per
// write, waits until all of them are queued in the handle's write group,
// then lets the gate go, so that the next holder commits them as one group.
func queueWhileHoldingTheGate(t *testing.T, r *CacheRepository, writes []func()) {
	t.Helper()
	leave, err := writegate.Enter(t.Context(), r.writeGroup().Slots(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, w := range writes {
		wg.Go(w)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		queued := r.writeGroup().Queued()
		if queued == len(writes) {
			break
		}
		if time.Now().After(deadline) {
			leave()
			t.Fatalf("%d of %d writes queued", queued, len(writes))
		}
		time.Sleep(time.Millisecond)
	}
	leave()
	wg.Wait()
}

// TestEntryWritesCommitTogetherAndFailAlone queues 40 writes behind the
// gate so that they run as one group: creates, a create whose natural key
// another create of the group takes first, an update and a delete of
// entries created before, and an update whose precondition fails. Each
// gets the answer it would get alone, the failed ones change nothing, and
// the change log records exactly the writes that succeeded, in order.
func TestEntryWritesCommitTogetherAndFailAlone(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "group.db"))
	r := migrateTable(t, db, "group_cache")
	if r.writeGroup() == nil {
		t.Fatal("an SQLite repository has no write group")
	}
	ctx := t.Context()
	for i := range 3 {
		if err := r.Create(ctx, testEntry(1000+i), testNow, domain.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	var before int
	if err := db.sql.NewRaw("SELECT count(*) FROM cache_changes").Scan(ctx, &before); err != nil {
		t.Fatal(err)
	}

	const creates = 36
	errs := make([]error, creates+4)
	var writes []func()
	for i := range creates {
		writes = append(writes, func() { errs[i] = r.Create(ctx, testEntry(i), testNow, domain.Quota{}) })
	}
	dup := testEntry(0)
	dup.ID = "0190a5c0-0000-7000-8000-999999999999"
	writes = append(writes,
		func() { errs[creates] = r.Create(ctx, dup, testNow, domain.Quota{}) },
		func() {
			_, errs[creates+1] = r.Update(ctx, testEntry(1000).ID, testNow, domain.Quota{}, func(e *domain.Entry) error {
				e.Data = []byte(`"updated"`)
				return nil
			})
		},
		func() {
			_, errs[creates+2] = r.Delete(ctx, testEntry(1001).ID, testNow, func(domain.Entry) error { return nil })
		},
		func() {
			_, errs[creates+3] = r.Update(ctx, testEntry(1002).ID, testNow, domain.Quota{}, func(e *domain.Entry) error {
				e.Data = []byte(`"must not be stored"`)
				return domain.ErrVersionMismatch
			})
		},
	)
	queueWhileHoldingTheGate(t, r, writes)

	// Create 0 has a rival in the group and is judged below.
	for i := 1; i < creates; i++ {
		if errs[i] != nil {
			t.Errorf("create %d: %v", i, errs[i])
		}
	}
	// The duplicate queued after the create of the same natural key, but
	// goroutines queue in any order: exactly one of the two won.
	if errs[0] == nil && !errors.Is(errs[creates], domain.ErrCacheEntityAlreadyExists) {
		t.Errorf("create of a taken natural key: %v, want ErrCacheEntityAlreadyExists", errs[creates])
	}
	if errs[0] != nil && (!errors.Is(errs[0], domain.ErrCacheEntityAlreadyExists) || errs[creates] != nil) {
		t.Errorf("the two creates of one natural key: %v and %v", errs[0], errs[creates])
	}
	if errs[creates+1] != nil || errs[creates+2] != nil {
		t.Errorf("update, delete: %v, %v", errs[creates+1], errs[creates+2])
	}
	if !errors.Is(errs[creates+3], domain.ErrVersionMismatch) {
		t.Errorf("refused update: %v", errs[creates+3])
	}
	if e, err := r.Get(ctx, testEntry(1000).ID, testNow); err != nil || string(e.Data) != `"updated"` || e.Version != 2 {
		t.Errorf("updated entry: %+v, %v", e, err)
	}
	if _, err := r.Get(ctx, testEntry(1001).ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("deleted entry: %v", err)
	}
	if e, err := r.Get(ctx, testEntry(1002).ID, testNow); err != nil || e.Version != 1 || string(e.Data) == `"must not be stored"` {
		t.Errorf("entry of the refused update: %+v, %v", e, err)
	}
	var after []int64
	if err := db.sql.NewRaw("SELECT rev FROM cache_changes ORDER BY rev").Scan(ctx, &after); err != nil {
		t.Fatal(err)
	}
	// 36 creates (one of the two rivals won), one update, one delete.
	if want := before + creates + 2; len(after) != want {
		t.Errorf("%d changes logged, want %d", len(after), want)
	}
	for i := 1; i < len(after); i++ {
		if after[i] != after[i-1]+1 {
			t.Errorf("revisions %d then %d: a gap", after[i-1], after[i])
		}
	}
}

// TestAGroupedWriteThatFailsMidwayLeavesNothing runs, in one group, a
// write that changes a row and then fails: its savepoint is rolled back,
// the next write of the group commits.
func TestAGroupedWriteThatFailsMidwayLeavesNothing(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "midway.db"))
	r := migrateTable(t, db, "midway_cache")
	ctx := t.Context()
	boom := errors.New("boom")
	var errA, errB error
	queueWhileHoldingTheGate(t, r, []func(){
		func() {
			errA = r.writer.write(ctx, nil, func(ctx context.Context, db bun.IDB) error {
				if err := r.create(ctx, db, testEntry(1), testNow, domain.Quota{}, 0); err != nil {
					return err
				}
				return boom
			})
		},
		func() {
			errB = r.writer.write(ctx, nil, func(ctx context.Context, db bun.IDB) error {
				return r.create(ctx, db, testEntry(2), testNow, domain.Quota{}, 0)
			})
		},
	})
	if !errors.Is(errA, boom) || errB != nil {
		t.Fatalf("errors %v and %v, want boom and nil", errA, errB)
	}
	if _, err := r.Get(ctx, testEntry(1).ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("the failed write's entry: %v, want not found", err)
	}
	if _, err := r.Get(ctx, testEntry(2).ID, testNow); err != nil {
		t.Errorf("the other write's entry: %v", err)
	}
}

// TestAWriterThatGivesUpWhileQueuedIsNotRun cancels a write while it waits
// behind the gate: it returns its context's error and never runs.
func TestAWriterThatGivesUpWhileQueuedIsNotRun(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "gaveup.db"))
	r := migrateTable(t, db, "gaveup_cache")
	leave, err := writegate.Enter(t.Context(), r.writeGroup().Slots(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Create(ctx, testEntry(1), testNow, domain.Quota{}) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		queued := r.writeGroup().Queued()
		if queued == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the write never queued")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	err = <-done
	leave()
	if err == nil {
		t.Fatal("a cancelled write succeeded")
	}
	if _, err := r.Get(t.Context(), testEntry(1).ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("the cancelled write's entry: %v, want not found", err)
	}
	if err := r.Create(t.Context(), testEntry(2), testNow, domain.Quota{}); err != nil {
		t.Errorf("a write after it: %v", err)
	}
}

// groupEndedBy runs, in one group, a write that fails with failure after
// ending the whole transaction (as SQLite does on a full disk), and
// another write; it returns both answers.
func groupEndedBy(t *testing.T, r *CacheRepository, failure error) (errA, errB error) {
	t.Helper()
	ctx := t.Context()
	queueWhileHoldingTheGate(t, r, []func(){
		func() {
			errA = r.writer.write(ctx, nil, func(ctx context.Context, db bun.IDB) error {
				if err := r.create(ctx, db, testEntry(1), testNow, domain.Quota{}, 0); err != nil {
					return err
				}
				if _, err := db.ExecContext(ctx, "ROLLBACK"); err != nil {
					return err
				}
				return failure
			})
		},
		func() {
			errB = r.writer.write(ctx, nil, func(ctx context.Context, db bun.IDB) error {
				return r.create(ctx, db, testEntry(2), testNow, domain.Quota{}, 0)
			})
		},
	})
	return errA, errB
}

// TestAGroupEndedByAnOutageAnswersEveryWriteWithThatFailure: a full disk
// ends the group's transaction; whether it committed is the database's
// to say, so both writes are answered with the failure itself (which the
// HTTP layer classifies) and neither took effect (internal/batch's rule).
func TestAGroupEndedByAnOutageAnswersEveryWriteWithThatFailure(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "ended.db"))
	r := migrateTable(t, db, "ended_cache")
	full := errors.New("the disk is full")
	errA, errB := groupEndedBy(t, r, &dberr.Outage{Kind: domain.ErrStorageFull, Cause: full})
	if !errors.Is(errA, full) || !errors.Is(errB, full) || !errors.Is(errB, domain.ErrStorageFull) {
		t.Fatalf("errors %v and %v, want both to carry the failure", errA, errB)
	}
	for _, i := range []int{1, 2} {
		if _, err := r.Get(t.Context(), testEntry(i).ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
			t.Errorf("entry %d: %v, want not found", i, err)
		}
	}
}

// TestAGroupEndedByARefusalRunsEachWriteAgainAlone: a write whose own
// failure ended the group's transaction, the database still there, does
// not decide the other's fate: each runs again alone, the failing one gets
// its failure and the other commits (internal/batch's rule).
func TestAGroupEndedByARefusalRunsEachWriteAgainAlone(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+filepath.Join(t.TempDir(), "refused.db"))
	r := migrateTable(t, db, "refused_cache")
	refused := errors.New("refused")
	errA, errB := groupEndedBy(t, r, refused)
	if !errors.Is(errA, refused) || errB != nil {
		t.Fatalf("errors %v and %v, want the refusal and nil", errA, errB)
	}
	if _, err := r.Get(t.Context(), testEntry(1).ID, testNow); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("the refused write's entry: %v, want not found", err)
	}
	if _, err := r.Get(t.Context(), testEntry(2).ID, testNow); err != nil {
		t.Errorf("the other write's entry: %v, want it committed", err)
	}
}
