// Package writegate queues the writers of one SQLite database in Go and
// commits its entry writes in groups.
package writegate

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
)

// SQLite has one writer at a time. Writers that find the database locked
// wait in SQLite's busy handler, which sleeps in steps of milliseconds and
// wakes them in no particular order. A write gate queues a process's
// writers of one SQLite database in Go instead, first come first served,
// so the lock passes straight to the next writer. Several processes on one
// file meet in the busy handler. PostgreSQL needs no gate: its writers
// lock rows, not the database.
//
// Every write of the process goes through the gate: multi-statement
// write transactions (refresh rotation, user updates, key additions),
// entry writes (Create, Update, Delete) and single statements (an audit
// event, a login failure, a new session: bunstore's gated). A single
// statement left to the busy handler is overtaken by every writer the
// gate lets in, and starves behind a queue of grouped writes. Entry writes and rotations are grouped: the writes waiting at
// the gate are committed together by whichever of them gets it (group.go,
// and the rotation group of bunstore's refresh store), which also spares
// each the gate's cost of serialising its statement's preparation (SQLite
// prepares outside its lock). docs/benchmarks.md ("Storage design
// choices") has the measurements.
//
// The gate belongs to the database handle (bunstore.DB): Open makes one
// for each SQLite handle, and every store made from the handle queues
// there.

// Enter waits for the gate, or for ctx to end, and returns the
// function that lets the next writer in. A nil gate lets everyone in.
// Time spent waiting is the other writers': it is left out of the budget
// of database time of call's caller (callers.Call.Waited).
func Enter(ctx context.Context, gate chan struct{}, call *callers.Call) (func(), error) {
	if gate == nil {
		return func() {}, nil
	}
	select {
	case gate <- struct{}{}:
		return func() { <-gate }, nil
	default:
	}
	start := time.Now()
	select {
	case gate <- struct{}{}:
		call.Waited(time.Since(start))
		return func() { <-gate }, nil
	case <-ctx.Done():
		call.Waited(time.Since(start))
		return nil, ctx.Err()
	}
}
