package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Group commit of refresh rotations on SQLite (docs/storage.md, "One
// batcher"): the rotation that gets the write gate commits the others
// waiting behind it in the same transaction (up to maxGroup at a time),
// sparing each its own COMMIT. Each rotation keeps its own statements,
// checks and answer, run in arrival order as consecutive transactions
// would; a rotation whose token is not the live one is judged there, in
// that order. A failure of the group's transaction follows the batcher's
// one rule (internal/batch; alone: rotateOne).

// maxGroup bounds the rotations one transaction commits.
const maxGroup = 64

// rotation is one RotateRefresh call waiting in a group.
type rotation struct {
	presented domain.Claims
	next      domain.RefreshRecord
	now       time.Time
	grace     time.Duration
	events    []domain.AuditEvent
	// call is the RotateRefresh call, charged its share of the group.
	call *bound.Call
	// answer is the rotation's outcome, set before the batcher answers
	// nil.
	answer ports.Rotation
}

// newRotationGroup returns the batcher of s's rotations on an SQLite
// handle whose write gate is gate.
func newRotationGroup(s *RefreshStore, gate chan struct{}) *batch.Batcher[*rotation] {
	return batch.New(batch.Config[*rotation]{
		Slots: gate, Max: maxGroup, PastBound: dberr.ErrPastBound,
		Run:    s.commitGroup,
		Alone:  s.rotateOne,
		Outage: dberr.BatchOutage,
	})
}

// commitGroup runs the rotations of jobs in one transaction, each
// answered in its rotation.answer, and returns the error of each (a job
// whose caller left). Rotations refused (or forgiven, or found reused) do
// not disturb the others. The caller holds the write gate.
func (s *RefreshStore) commitGroup(ctx context.Context, jobs []batch.Job[*rotation]) ([]error, error) {
	out := make([]error, len(jobs))
	// Each rotation's caller is charged the group's time on its connection
	// in equal shares (callers.Call.Charge): rotations are alike.
	var start time.Time
	defer func() {
		if !start.IsZero() {
			share := time.Since(start) / time.Duration(len(jobs))
			for _, j := range jobs {
				j.Work.call.Hold().Charge(share)
			}
		}
	}()
	err := inTx(ctx, s.db.sql, "rotate refresh tokens", func(ctx context.Context, tx bun.Tx) (err error) {
		start = time.Now()
		// BEGIN IMMEDIATE, bound by ctx, took the write lock: the group's
		// statements (by key) wait for no lock, so they run without the
		// driver's per-statement cancellation watcher, a goroutine each.
		// ctx still bounds the group: at its end database/sql rolls the
		// transaction back, and the next statement fails.
		ctx = context.WithoutCancel(ctx)
		for i, j := range jobs {
			if out[i] = j.Ctx.Err(); out[i] != nil {
				out[i] = dberr.Wrap("rotate refresh token", out[i])
				continue
			}
			if j.Work.answer, err = s.rotateIn(ctx, tx, j.Work); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, dberr.BatchFailure(ctx, "rotate refresh tokens", err)
	}
	return out, nil
}

// rotateOne runs one rotation in a transaction of its own, through the
// write gate.
func (s *RefreshStore) rotateOne(ctx context.Context, r *rotation) error {
	return authInTx(ctx, r.call, s.db, "rotate refresh token", func(ctx context.Context, tx bun.Tx) (err error) {
		r.answer, err = s.rotateIn(ctx, tx, r)
		return err
	})
}
