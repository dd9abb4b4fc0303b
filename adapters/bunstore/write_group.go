package bunstore

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// Group commit of entry writes on SQLite.
//
// An entry write (Create, Update, Delete) is small, but each one was its
// own transaction: under load the writers met in SQLite's busy handler,
// and every commit appended to the WAL every page the write touched, the
// table's and each index's and the change log's (about eight pages, 32 KB,
// for one created entry). A writeGroup queues a handle's entry writes and
// lets the writer that gets the write gate (writegate.go) run the ones
// waiting behind it in the same transaction, each inside a SAVEPOINT of
// its own: a write that fails (a conflict, a failed precondition) is
// rolled back to its savepoint and answered alone, the others commit.
// Consecutive writes mostly touch the same pages (entries are appended to
// the same leaves of the indexes and of the log), so a group of 64 writes
// appends a few dozen pages to the WAL instead of five hundred.
//
// Semantics are those of consecutive transactions: the writes of a group
// run one after the other, in arrival order, each seeing the ones before
// it; the change log gives them consecutive revisions, and a subscriber
// sees them when the group commits, in revision order. A write answers
// only after its group committed. If the commit fails, every write of the
// group fails with that error, and none of them took effect.
//
// The statements run under the context of the group, not of each writer:
// interrupting a statement inside a transaction makes SQLite roll back the
// whole transaction, so a writer that gives up must not interrupt the
// others. A writer whose context ends while it waits is taken out of the
// queue; once taken, it waits for its answer (bounded by the group's
// timeout). PostgreSQL, which has no gate, runs each write as before.
//
// docs/benchmarks.md has the measurements.

// maxWriteGroup bounds the writes one transaction commits.
const maxWriteGroup = 64

// groupWrite is one write waiting in a group.
type groupWrite struct {
	ctx  context.Context //nolint:containedctx // a write whose caller gave up is not run
	fn   func(ctx context.Context, db bun.IDB) error
	done chan error
}

// writeGroup is the queue of one SQLite handle's entry writes.
type writeGroup struct {
	queue writeQueue[groupWrite]
}

// run queues fn, and returns its result once a holder of gate, perhaps
// this caller, has run and committed it. timeout bounds the transaction of
// a group this caller runs.
func (g *writeGroup) run(ctx context.Context, db *bun.DB, gate chan struct{}, timeout time.Duration,
	fn func(ctx context.Context, db bun.IDB) error,
) error {
	w := &groupWrite{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.queue.push(w)
	return g.queue.await(ctx, w, w.done, gate, maxWriteGroup, func(batch []*groupWrite) {
		g.commit(ctx, db, timeout, batch)
	})
}

// commit runs batch in one transaction and answers every write in it.
//
// The transaction ends at the earliest deadline of the writes it runs
// (and at most timeout from now), not timeout after it began: each
// caller's bound (--database-timeout, README "Configuration") covers its
// wait at the gate, its wait for another process's lock in SQLite's busy
// handler (which the driver interrupts when the context ends) and the
// commit together, so a write never answers past its bound, and never
// 503 after it committed. A write whose caller gave up before the
// transaction began is answered at once and not run.
func (g *writeGroup) commit(ctx context.Context, db *bun.DB, timeout time.Duration, batch []*groupWrite) {
	deadline := time.Now().Add(timeout)
	live := batch[:0:0]
	for _, w := range batch {
		if err := w.ctx.Err(); err != nil {
			w.done <- err
			continue
		}
		if d, ok := w.ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		live = append(live, w)
	}
	if len(live) == 0 {
		return
	}
	batch = live
	ctx, cancel := context.WithDeadlineCause(context.WithoutCancel(ctx), deadline, errPastBound)
	defer cancel()
	results := make([]error, len(batch))
	err := func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if len(batch) == 1 {
			// Alone, a write needs no savepoint: its failure rolls back
			// the transaction.
			w := batch[0]
			if err := w.ctx.Err(); err != nil {
				results[0] = err
				_ = tx.Rollback()
				return nil
			}
			if results[0] = w.fn(ctx, tx); results[0] != nil {
				_ = tx.Rollback()
				return nil
			}
			return tx.Commit()
		}
		for i, w := range batch {
			if err := w.ctx.Err(); err != nil {
				results[i] = err
				continue
			}
			if _, err := tx.ExecContext(ctx, "SAVEPOINT cachegate_write"); err != nil {
				_ = tx.Rollback()
				return err
			}
			results[i] = w.fn(ctx, tx)
			if results[i] != nil {
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO cachegate_write"); err != nil {
					// SQLite ended the whole transaction on the write's
					// failure (a full disk, an I/O error): that failure is
					// what every write of the group must be answered with,
					// so a full disk still reads as one (507), not as a
					// missing savepoint.
					_ = tx.Rollback()
					return errors.Join(results[i], err)
				}
			}
			if _, err := tx.ExecContext(ctx, "RELEASE cachegate_write"); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		return tx.Commit()
	}()
	for i, w := range batch {
		if err != nil {
			// Past the group's deadline the driver's error may say only
			// "interrupted": translate names it as the outage it is.
			w.done <- translate(ctx, dbError("commit a group of entry writes", err))
			continue
		}
		if results[i] != nil {
			results[i] = translate(ctx, results[i])
		}
		w.done <- results[i]
	}
}
