package bunstore

import (
	"context"
	"runtime"
	"sync"
	"weak"

	"github.com/uptrace/bun"
)

// SQLite has one writer at a time. Writers that find the database locked
// wait in SQLite's busy handler, which sleeps in steps of milliseconds and
// wakes them in no particular order. A write gate queues a process's
// writers of one SQLite database in Go instead, first come first served,
// so the lock passes straight to the next writer. Several processes on one
// file still meet in the busy handler, as before. PostgreSQL needs no gate:
// its writers lock rows, not the database.
//
// Only multi-statement write transactions (authInTx: refresh rotation,
// user updates, key additions) go through the gate. Measured with
// test/bench/run, 64 connections, on the refresh path: throughput the same
// within the machine's noise (2,611–3,248 req/s against 2,871), p99 down
// from 74 ms to 35 ms. Single-statement writes stay with the busy handler:
// gating them halved POST's p99 but cost 15–20 % of its throughput (0.81
// of the ceiling against 1.04 in back-to-back runs), because the gate also
// serialises the statement's preparation, which SQLite runs outside its
// lock.

// writeGates maps each open SQLite database to its gate. The key is weak
// and a cleanup removes the entry, so a closed and forgotten database does
// not stay reachable through this map.
var writeGates sync.Map // weak.Pointer[bun.DB] → chan struct{}

// writeGate returns db's gate, or nil when db needs none.
func writeGate(db *bun.DB) chan struct{} {
	if isPostgres(db) {
		return nil
	}
	key := weak.Make(db)
	if g, ok := writeGates.Load(key); ok {
		return g.(chan struct{})
	}
	g, loaded := writeGates.LoadOrStore(key, make(chan struct{}, 1))
	if !loaded {
		runtime.AddCleanup(db, func(k weak.Pointer[bun.DB]) { writeGates.Delete(k) }, key)
	}
	return g.(chan struct{})
}

// enterWriter waits for the gate, or for ctx to end, and returns the
// function that lets the next writer in. A nil gate lets everyone in.
func enterWriter(ctx context.Context, gate chan struct{}) (func(), error) {
	if gate == nil {
		return func() {}, nil
	}
	select {
	case gate <- struct{}{}:
		return func() { <-gate }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
