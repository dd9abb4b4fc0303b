package bunstore

import (
	"context"
	"time"
)

// SQLite has one writer at a time. Writers that find the database locked
// wait in SQLite's busy handler, which sleeps in steps of milliseconds and
// wakes them in no particular order. A write gate queues a process's
// writers of one SQLite database in Go instead, first come first served,
// so the lock passes straight to the next writer. Several processes on one
// file still meet in the busy handler, as before. PostgreSQL needs no gate:
// its writers lock rows, not the database.
//
// Multi-statement write transactions (authInTx: refresh rotation, user
// updates, key additions) go through the gate, and so do entry writes
// (Create, Update, Delete), grouped (write_group.go). Measured with
// test/bench/run, 64 connections, on the refresh path: throughput the same
// within the machine's noise (2,611–3,248 req/s against 2,871), p99 down
// from 74 ms to 35 ms. Entry writes were first left with the busy handler:
// gating them one transaction each halved POST's p99 but cost 15–20 % of
// its throughput, because the gate also serialises the statement's
// preparation, which SQLite runs outside its lock. Grouped, they gain far
// more than that: writes waiting at the gate are committed together by
// whichever of them gets it (rotation_group.go for refresh rotations,
// write_group.go for entries).
//
// The gate belongs to the database handle (DB): Open makes one for each
// SQLite handle, and every store made from the handle queues there.

// enterWriter waits for the gate, or for ctx to end, and returns the
// function that lets the next writer in. A nil gate lets everyone in.
// Time spent waiting is the other writers': it is left out of the
// caller's budget of database time (noteWaited).
func enterWriter(ctx context.Context, gate chan struct{}) (func(), error) {
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
		noteWaited(ctx, time.Since(start))
		return func() { <-gate }, nil
	case <-ctx.Done():
		noteWaited(ctx, time.Since(start))
		return nil, ctx.Err()
	}
}
