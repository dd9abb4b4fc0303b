// Package writegate queues the writers of one SQLite database in Go and
// commits its entry writes in groups.
package writegate

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/callers"
)

// SQLite has one writer at a time, and its busy handler sleeps in steps
// of milliseconds and wakes waiters in no particular order. A write gate
// queues a process's writers of one SQLite database in Go instead, first
// come first served. Every write of the process goes through it, single
// statements too (bunstore's gated): one left to the busy handler is
// overtaken by every writer the gate lets in. Entry writes and rotations
// are grouped: the writes waiting at the gate are committed together by
// whichever of them gets it (group.go, bunstore's rotation group). The gate
// belongs to the handle (bunstore.DB); docs/storage.md, "Connections".

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
