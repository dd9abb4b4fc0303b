package bunstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// Group commit of refresh rotations on SQLite. Every rotation is a small
// write transaction, and SQLite runs one writer at a time: under load the
// rotations queue at the write gate (writegate.go), and each pays its own
// BEGIN and COMMIT, the COMMIT being a write(2) of the WAL frames. A
// rotationGroup lets the rotation that gets the gate commit the others
// waiting behind it in the same transaction: every waiting rotation is
// first put on the group's pending list, then waits for the gate; the one
// that gets it takes the whole list (up to maxGroup at a time) and runs
// it. A rotation already taken by an earlier holder finds its result
// ready. Each rotation keeps its own statements, checks and answer, and a
// failure other than "the old token matched nothing" makes every
// rotation of the group run again alone (RefreshStore.commitGroup), so
// reuse detection and the grace window see exactly what they would see
// one by one: rotations of one group run in arrival order in one
// transaction, as consecutive transactions would, and a refused rotation
// is explained (and its family revoked, or its grace applied) by its
// caller after the group committed, as before.
//
// docs/benchmarks.md has the measurements.

// maxGroup bounds the rotations one transaction commits.
const maxGroup = 64

// rotation is one RotateRefresh call waiting in a group.
type rotation struct {
	// ctx is the caller's: a rotation whose caller gave up is not run.
	ctx   context.Context //nolint:containedctx // the request travels to the goroutine that commits it
	oldID string
	next  domain.RefreshRecord
	now   time.Time
	// done receives the rotation's result, once.
	done chan error
}

// rotationGroup is the list of rotations waiting for the write gate.
type rotationGroup struct {
	mu      sync.Mutex
	pending []*rotation
}

// rotate queues r, waits for the gate and commits what is pending, until
// r has been taken; then returns r's result.
func (g *rotationGroup) rotate(ctx context.Context, gate chan struct{}, r *rotation, commit func(context.Context, []*rotation)) error {
	r.done = make(chan error, 1)
	g.mu.Lock()
	g.pending = append(g.pending, r)
	g.mu.Unlock()
	leave, err := enterWriter(ctx, gate)
	if err != nil {
		g.mu.Lock()
		i := slices.Index(g.pending, r)
		if i >= 0 {
			g.pending = slices.Delete(g.pending, i, i+1)
		}
		g.mu.Unlock()
		if i >= 0 {
			return dbError("rotate refresh token", err)
		}
		// A holder of the gate took r: its result comes.
		return <-r.done
	}
	for {
		g.mu.Lock()
		if !slices.Contains(g.pending, r) {
			g.mu.Unlock()
			break
		}
		n := min(len(g.pending), maxGroup)
		batch := slices.Clone(g.pending[:n])
		g.pending = slices.Delete(g.pending, 0, n)
		g.mu.Unlock()
		commit(ctx, batch)
	}
	leave()
	return <-r.done
}
