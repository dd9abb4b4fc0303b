package bunstore

import (
	"context"
	"slices"
	"sync"
)

// writeQueue is the queue of the writes that a holder of a gate's slot
// runs in batches: the entry writes of an SQLite handle (write_group.go)
// and the creates of a repository on PostgreSQL (create_batch.go).
//
// A writer puts its write W in the queue, then waits for its answer or for
// a slot of the gate (await). The writer that gets a slot takes the writes
// waiting at that moment, its own among them unless an earlier holder took
// it, runs them as a batch and answers each, and goes on until its own is
// answered. A writer whose context ends while its write still waits takes
// it out; once taken, a write is answered.
type writeQueue[W any] struct {
	mu      sync.Mutex
	pending []*W
}

// push queues w.
func (q *writeQueue[W]) push(w *W) {
	q.mu.Lock()
	q.pending = append(q.pending, w)
	q.mu.Unlock()
}

// len returns how many writes wait.
func (q *writeQueue[W]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// remove takes w out of the queue, and reports whether it was still there.
func (q *writeQueue[W]) remove(w *W) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.pending, w)
	if i < 0 {
		return false
	}
	q.pending = slices.Delete(q.pending, i, i+1)
	return true
}

// take removes and returns up to n waiting writes, nil when none waits.
func (q *writeQueue[W]) take(n int) []*W {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(len(q.pending), n)
	if n == 0 {
		return nil
	}
	batch := slices.Clone(q.pending[:n])
	q.pending = slices.Delete(q.pending, 0, n)
	return batch
}

// await returns the answer of w, which push queued, from done: once a
// holder of a slot of gate, perhaps this caller, has run it. A holder runs
// batches of at most n writes with run, which must answer every write it
// is given.
func (q *writeQueue[W]) await(ctx context.Context, w *W, done <-chan error, gate chan struct{}, n int, run func([]*W)) error {
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if q.remove(w) {
			return ctx.Err()
		}
		// A holder of a slot took w: its answer comes.
		return <-done
	case gate <- struct{}{}:
	}
	defer func() { <-gate }()
	// The gate and the end of ctx may come together (select picks either):
	// a writer past its bound leaves rather than start a batch it has no
	// time left for.
	if ctx.Err() != nil && q.remove(w) {
		return ctx.Err()
	}
	for {
		batch := q.take(n)
		if batch == nil {
			break
		}
		run(batch)
		select {
		case err := <-done:
			return err
		default:
		}
	}
	return <-done
}
