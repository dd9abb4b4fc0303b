package writegate

import (
	"context"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
)

// Group commit of entry writes on SQLite (docs/storage.md, "One batcher").
//
// A transaction per entry write would append to the WAL every page it
// touches; the writer that gets the write gate runs the writes waiting
// behind it in one transaction, each inside a SAVEPOINT of its own, and
// consecutive writes mostly touch the same pages. A write that fails is
// rolled back to its savepoint and answered alone, the others commit.
//
// Semantics are those of consecutive transactions, in arrival order; a
// write answers only after its group committed, and a failure of the
// group's transaction is answered by the batcher's one rule
// (internal/batch). The statements run under the group's context, not each
// writer's: interrupting one makes SQLite roll back the whole transaction.

// maxGroup bounds the writes one transaction commits.
const maxGroup = 64

// Write is one write waiting in a group: Fn, on the database DB, for the
// bounded call Call, which its time in the group is charged to.
type Write struct {
	DB   *bun.DB
	Fn   func(ctx context.Context, db bun.IDB) error
	Call *callers.Call
}

// NewGroup returns the batcher of the entry writes of the SQLite database
// whose write gate is gate.
func NewGroup(gate chan struct{}) *batch.Batcher[Write] {
	return batch.New(batch.Config[Write]{
		Slots: gate, Max: maxGroup, PastBound: dberr.ErrPastBound,
		Run: commitWrites,
		Alone: func(ctx context.Context, w Write) error {
			leave, err := Enter(ctx, gate, w.Call)
			if err != nil {
				return err
			}
			defer leave()
			answers, err := commitWrites(ctx, []batch.Job[Write]{{Ctx: ctx, Work: w}})
			if err != nil {
				return err
			}
			return answers[0]
		},
		Outage: dberr.BatchOutage,
	})
}

// commitWrites runs jobs in one transaction and returns each write's
// answer, or the transaction's failure (dberr.BatchFailure). Each write's
// caller is charged the time of its own statements and an equal share of
// the rest of the transaction (savepoints, commit), from when it has its
// connection: the time of SQLite's one writer it took from every other
// writer (callers.Call.Charge).
func commitWrites(ctx context.Context, jobs []batch.Job[Write]) ([]error, error) {
	db := jobs[0].Work.DB
	answers := make([]error, len(jobs))
	own := make([]time.Duration, len(jobs))
	// start is when the transaction had its connection: the wait for one
	// is the others' time.
	var start time.Time
	defer func() {
		if start.IsZero() {
			return
		}
		var sum time.Duration
		for _, d := range own {
			sum += d
		}
		share := (time.Since(start) - sum) / time.Duration(len(jobs))
		for i, j := range jobs {
			j.Work.Call.Charge(own[i] + share)
		}
	}()
	// The transaction begins (BEGIN IMMEDIATE) under ctx and so takes the
	// write lock within the group's bound; its statements (by key, or a
	// purge of at most its batch of rows through an index) then wait for
	// no lock and run under sctx, without the driver's per-statement
	// cancellation watcher (a goroutine each). ctx still bounds the group:
	// at its end database/sql rolls the transaction back, and the next
	// statement fails.
	sctx := context.WithoutCancel(ctx)
	// run runs job i's write in tx, timing it.
	run := func(i int, tx bun.IDB) error {
		t := time.Now()
		defer func() { own[i] = time.Since(t) }()
		return jobs[i].Work.Fn(sctx, tx)
	}
	err := func() error {
		var (
			tx  bun.Tx
			err error
		)
		if len(jobs) == 1 {
			tx, err = db.BeginTx(ctx, nil)
		} else {
			var done func()
			tx, done, err = beginInMemorySubjournal(ctx, db)
			defer done()
		}
		if err != nil {
			return err
		}
		start = time.Now()
		if len(jobs) == 1 {
			// Alone, a write needs no savepoint: its failure rolls back
			// the transaction.
			j := jobs[0]
			if err := j.Ctx.Err(); err != nil {
				answers[0] = err
				_ = tx.Rollback()
				return nil
			}
			if answers[0] = run(0, tx); answers[0] != nil {
				_ = tx.Rollback()
				return nil
			}
			return tx.Commit()
		}
		for i, j := range jobs {
			if err := j.Ctx.Err(); err != nil {
				answers[i] = err
				continue
			}
			if _, err := tx.ExecContext(sctx, "SAVEPOINT cachegate_write"); err != nil {
				_ = tx.Rollback()
				return err
			}
			answers[i] = run(i, tx)
			if answers[i] != nil {
				if _, err := tx.ExecContext(sctx, "ROLLBACK TO cachegate_write"); err != nil {
					// SQLite ended the whole transaction on the write's
					// failure (a full disk, an I/O error): that failure
					// is the group's, so a full disk still reads as one
					// (507), not as a missing savepoint.
					_ = tx.Rollback()
					return errors.Join(answers[i], err)
				}
			}
			if _, err := tx.ExecContext(sctx, "RELEASE cachegate_write"); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		// Past the group's deadline the driver's error may say only
		// "interrupted": dberr.BatchFailure names it as the outage it is.
		return nil, dberr.BatchFailure(ctx, "commit a group of entry writes", err)
	}
	for i := range answers {
		if answers[i] != nil {
			answers[i] = dberr.Translate(ctx, answers[i])
		}
	}
	return answers, nil
}

// beginInMemorySubjournal begins a transaction of a group on a connection
// of db set to temp_store=MEMORY, and returns with it what puts the
// connection back as it was, to call once the transaction ended.
//
// The savepoints' page copies then stay in memory instead of going to a
// temporary file past 64 KiB (one write's pages at most: RELEASE drops
// them; never read after a crash). Other queries' sorts must not keep
// every row in memory, so the connection gets the default back before it
// returns to the pool, and is discarded when that fails.
func beginInMemorySubjournal(ctx context.Context, db *bun.DB) (bun.Tx, func(), error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return bun.Tx{}, func() {}, err
	}
	done := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if _, err := conn.ExecContext(rctx, "PRAGMA temp_store = DEFAULT"); err != nil {
			// Not back to the default: the pool must not reuse it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		done()
		return bun.Tx{}, func() {}, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		done()
		return bun.Tx{}, func() {}, err
	}
	return tx, done, nil
}
