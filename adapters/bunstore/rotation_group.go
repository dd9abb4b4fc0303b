package bunstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/uptrace/bun"

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
// failure (a statement that fails, not a token that cannot rotate) makes
// every rotation of the group run again alone (RefreshStore.commitGroup),
// so reuse detection and the grace window see exactly what they would see
// one by one: rotations of one group run in arrival order in one
// transaction, as consecutive transactions would, and a rotation whose
// token is not the live one is judged there, in that order (its family
// revoked with its audit event, or its grace applied).
//
// docs/benchmarks.md has the measurements.

// maxGroup bounds the rotations one transaction commits.
const maxGroup = 64

// rotation is one RotateRefresh call waiting in a group.
type rotation struct {
	// ctx is the caller's: a rotation whose caller gave up is not run.
	ctx       context.Context //nolint:containedctx // the request travels to the goroutine that commits it
	presented domain.Claims
	next      domain.RefreshRecord
	now       time.Time
	grace     time.Duration
	events    []domain.AuditEvent
	// rec is the record answered, set before done receives nil.
	rec domain.RefreshRecord
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

// commitGroup runs the rotations of batch in one transaction and hands
// each its answer. Rotations refused (or forgiven, or found reused) do not
// disturb the others. Any failure rolls the whole group back, and each
// rotation is then run again in a transaction of its own, so one bad
// rotation never decides the fate of another. The caller holds the write
// gate.
func (s *RefreshStore) commitGroup(ctx context.Context, batch []*rotation) {
	answers := make([]rotationAnswer, len(batch))
	err := inTx(ctx, s.db, "rotate refresh tokens", func(ctx context.Context, tx bun.Tx) error {
		for i, r := range batch {
			if err := r.ctx.Err(); err != nil {
				answers[i] = rotationAnswer{verdict: dbError("rotate refresh token", err)}
				continue
			}
			a, err := s.rotateIn(ctx, tx, r)
			if err != nil {
				return err
			}
			answers[i] = a
		}
		return nil
	})
	for i, r := range batch {
		switch {
		case err == nil:
		case len(batch) == 1:
			answers[i] = rotationAnswer{verdict: err}
		default:
			var a rotationAnswer
			if err := inTx(r.ctx, s.db, "rotate refresh token", func(ctx context.Context, tx bun.Tx) (err error) {
				a, err = s.rotateIn(ctx, tx, r)
				return err
			}); err != nil {
				a = rotationAnswer{verdict: err}
			}
			answers[i] = a
		}
		r.rec = answers[i].rec
		r.done <- answers[i].verdict
	}
}
