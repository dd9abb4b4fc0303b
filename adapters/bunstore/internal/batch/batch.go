// Package batch runs the writes that wait for a store's slots in batches:
// the entry writes of an SQLite handle (its write group), the creates of a
// repository on PostgreSQL (its create batches) and the refresh rotations
// of an SQLite handle (its rotation group). docs/storage.md ("One
// batcher") says where each is used and what it gained.
//
// A waiter (Do) queues its work, then waits for a slot (or the end of its
// context). The waiter that gets a slot finds its answer there if an
// earlier holder ran its work, and leaves at once; else it takes the works
// waiting at that moment (at most Max), its own among them, runs them as
// one batch (Run) and answers each, and goes on until its own is
// answered; then it gives the slot back. A waiter answered while it waits
// still passes through the slot rather than leave on its answer: the
// slot's hand-offs through answered waiters give the queue time to fill,
// so batches are larger (docs/benchmarks.md, "Storage design choices").
//
// # The failure rule
//
// One rule for every batch, whatever it writes:
//
//   - One waiter's own work refused (a conflict, a failed precondition, a
//     refused quota, a token that cannot rotate): Run answers that waiter
//     alone with its refusal, and the others of the batch commit. When
//     only a run by itself can tell the answer (a create the batch's
//     statement left out), Run answers ErrAlone and the waiter runs its
//     work alone (Alone), under its own context, after the batch.
//   - The batch's statement or transaction fails while the database is
//     still there (it refused the statement, the transaction ended):
//     nothing of the batch committed, and every waiter runs its work again
//     alone (Alone), so each gets the answer it would have got by itself
//     and one bad work never decides the fate of another.
//   - The database is unavailable under the batch (a lost connection, a
//     passed bound, a full disk: Outage reports it): whether the batch
//     committed is unknown, so no waiter runs again (it could meet its own
//     row); every waiter of the batch is answered with that failure.
//   - Deadlines. Each waiter's context carries its own bound (the
//     store's --database-timeout, README "Configuration"). A waiter whose
//     context ends while it still waits in the queue leaves it and gets
//     its context's error. A batch runs under a context that ends at the
//     earliest deadline of the waiters it runs, and at most Timeout after
//     it began, so no waiter is answered past its bound, and none 503
//     after it committed; a waiter whose context ended before the batch
//     began is answered at once with its context's error and not run.
//     The batch's context is not the holder's: a holder that gives up
//     never interrupts the others' statements (SQLite rolls back a whole
//     transaction when one statement is interrupted).
//
// Answers are given once the batch committed (or failed): no waiter
// answers before the works it shares a commit with took effect.
package batch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// ErrAlone is what Run answers a work that must run by itself: Do then
// runs it with Alone.
var ErrAlone = errors.New("batch: run alone")

// Job is one waiter's work as Run sees it: its context (checked before
// each work of the batch runs: a waiter that gave up meanwhile is answered
// with its context's error and not run) and its work.
type Job[W any] struct {
	Ctx  context.Context //nolint:containedctx // a work whose waiter gave up is not run
	Work W
}

// Config is what a Batcher needs.
type Config[W any] struct {
	// Slots is the gate a holder takes: at most cap(Slots) batches run at
	// once. Other writers may share it (SQLite's write gate).
	Slots chan struct{}
	// Max bounds the works of one batch.
	Max int
	// Timeout bounds a batch's context from the moment it begins (0: only
	// the waiters' deadlines bound it).
	Timeout time.Duration
	// PastBound is the cause of the batch's context when its deadline
	// passes (nil: context.DeadlineExceeded).
	PastBound error
	// Run runs jobs as one batch under ctx and returns each job's answer
	// (nil, its refusal, or ErrAlone), or the batch's failure.
	Run func(ctx context.Context, jobs []Job[W]) (answers []error, err error)
	// Alone runs one work by itself under its waiter's context.
	Alone func(ctx context.Context, work W) error
	// Outage reports whether err, a batch's failure, leaves unknown
	// whether the batch committed (the database is unavailable).
	Outage func(err error) bool
}

// Batcher queues works and runs them in batches under the failure rule of
// the package.
type Batcher[W any] struct {
	cfg     Config[W]
	mu      sync.Mutex
	pending []*waiter[W]
}

type waiter[W any] struct {
	job  Job[W]
	done chan error
}

// New returns a Batcher of cfg.
func New[W any](cfg Config[W]) *Batcher[W] {
	if cfg.Max < 1 {
		cfg.Max = 1
	}
	return &Batcher[W]{cfg: cfg}
}

// Slots returns the gate of cfg.Slots (tests hold it to queue works).
func (b *Batcher[W]) Slots() chan struct{} { return b.cfg.Slots }

// Queued returns how many works wait to be taken into a batch.
func (b *Batcher[W]) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// Do queues work and returns its answer, once a batch, perhaps run by
// this caller, has run it (or it ran alone).
func (b *Batcher[W]) Do(ctx context.Context, work W) error {
	w := &waiter[W]{job: Job[W]{Ctx: ctx, Work: work}, done: make(chan error, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, w)
	b.mu.Unlock()
	err := b.await(ctx, w)
	if errors.Is(err, ErrAlone) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return b.cfg.Alone(ctx, work)
	}
	return err
}

// remove takes w out of the queue, and reports whether it was still there.
func (b *Batcher[W]) remove(w *waiter[W]) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.pending, w)
	if i < 0 {
		return false
	}
	b.pending = slices.Delete(b.pending, i, i+1)
	return true
}

// take removes and returns up to Max waiting works, nil when none waits.
func (b *Batcher[W]) take() []*waiter[W] {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(b.pending), b.cfg.Max)
	if n == 0 {
		return nil
	}
	batch := slices.Clone(b.pending[:n])
	b.pending = slices.Delete(b.pending, 0, n)
	return batch
}

// await returns w's answer: from a holder of a slot, perhaps this caller,
// once w has passed through a slot (see the package comment).
func (b *Batcher[W]) await(ctx context.Context, w *waiter[W]) error {
	select {
	case <-ctx.Done():
		if b.remove(w) {
			return ctx.Err()
		}
		// A holder took w: its answer comes, bounded by the batch's
		// deadline, which is at most w's own.
		return <-w.done
	case b.cfg.Slots <- struct{}{}:
	}
	defer func() { <-b.cfg.Slots }()
	// The slot and the end of ctx may come together (select picks
	// either): a waiter past its bound leaves rather than start a batch it
	// has no time left for.
	if ctx.Err() != nil && b.remove(w) {
		return ctx.Err()
	}
	for {
		select {
		case err := <-w.done:
			return err
		default:
		}
		batch := b.take()
		if batch == nil {
			break
		}
		b.run(ctx, batch)
		select {
		case err := <-w.done:
			return err
		default:
		}
	}
	return <-w.done
}

// run runs batch and answers every waiter in it, under the failure rule.
func (b *Batcher[W]) run(ctx context.Context, batch []*waiter[W]) {
	var deadline time.Time
	if b.cfg.Timeout > 0 {
		deadline = time.Now().Add(b.cfg.Timeout)
	}
	live := make([]*waiter[W], 0, len(batch))
	for _, w := range batch {
		if err := w.job.Ctx.Err(); err != nil {
			w.done <- err
			continue
		}
		if d, ok := w.job.Ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
			deadline = d
		}
		live = append(live, w)
	}
	if len(live) == 0 {
		return
	}
	bctx := context.WithoutCancel(ctx)
	if !deadline.IsZero() {
		cause := b.cfg.PastBound
		if cause == nil {
			cause = context.DeadlineExceeded
		}
		var cancel context.CancelFunc
		bctx, cancel = context.WithDeadlineCause(bctx, deadline, cause)
		defer cancel()
	}
	jobs := make([]Job[W], len(live))
	for i, w := range live {
		jobs[i] = w.job
	}
	answers, err := b.cfg.Run(bctx, jobs)
	for i, w := range live {
		switch {
		case err != nil && b.cfg.Outage(err):
			w.done <- err
		case err != nil:
			w.done <- ErrAlone
		case i < len(answers):
			w.done <- answers[i]
		default:
			w.done <- nil
		}
	}
}
