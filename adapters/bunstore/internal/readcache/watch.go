// Package readcache keeps what the point reads of an SQLite file found,
// for as long as the file has not changed since (ARCHITECTURE.md, "The
// entry cache of SQLite point reads"). Whether it changed is asked of the
// file itself: PRAGMA data_version, on a connection of its own that never
// writes, differs between two calls when any other connection committed in
// between, of this process or another (the CLI's import, a second server,
// the sqlite3 shell).
package readcache

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"time"
)

// Stamp is the state of the file a reader saw: the answer of one round
// of the Watch, asked after the reader arrived. Two stamps of equal State
// saw the same committed data.
type Stamp struct {
	// State is the data version with the epoch of the watch's connection
	// (the values of two connections are not comparable).
	State state
	// Seq orders the rounds that gave the stamps.
	Seq uint64
}

type state struct {
	epoch   uint64
	version int64
}

// Watch asks an SQLite file's data version on a connection of its own.
// Readers that arrive while a question runs share the next one, so the
// file is asked once per round however many readers wait, and every
// reader's answer comes from a question asked after it arrived.
type Watch struct {
	connector driver.Connector
	// Timeout bounds each round; zero is 5 s.
	Timeout time.Duration

	mu      sync.Mutex
	db      *sql.DB
	conn    *sql.Conn
	stmt    *sql.Stmt
	epoch   uint64
	seq     uint64
	closed  bool
	running bool
	// next gathers the readers of the round that has not started yet.
	next *round
}

type round struct {
	done chan struct{}
	// late is closed when the round has not been answered within the
	// watch's Timeout of its first reader's arrival (it ran long, or
	// waited behind a round that did): its readers go on without it.
	late  chan struct{}
	timer *time.Timer
	stamp Stamp
	err   error
}

// errLate is a reader's answer when its round ran past the Timeout.
var errLate = errors.New("readcache: the data version was not answered in time")

// NewWatch returns the watch of the file connector opens. It connects on
// first use.
func NewWatch(connector driver.Connector) *Watch { return &Watch{connector: connector} }

// Now returns the file's state as seen by a question asked after Now was
// called. It fails when the question fails or ctx ends first; the reader
// then reads without the cache.
func (w *Watch) Now(ctx context.Context) (Stamp, error) {
	w.mu.Lock()
	r := w.next
	if r == nil {
		r = &round{done: make(chan struct{}), late: make(chan struct{})}
		r.timer = time.AfterFunc(w.timeout(), func() { close(r.late) })
		w.next = r
	}
	lead := !w.running
	if lead {
		w.running, w.next = true, nil
	}
	w.mu.Unlock()
	if lead {
		w.run(r)
	}
	select {
	case <-r.done:
		return r.stamp, r.err
	case <-r.late:
		return Stamp{}, errLate
	case <-ctx.Done():
		return Stamp{}, ctx.Err()
	}
}

// run answers round r, then starts the round that gathered meanwhile, if
// any, on a goroutine of its own, so no reader runs more than its own
// round.
//
// The question runs without a context: the driver would watch a context
// that can end with a goroutine of its own per statement. A timer per
// round lets its readers go on without it when it is not answered within
// the Timeout (a frozen file system); the next round waits for it.
func (w *Watch) run(r *round) {
	r.stamp, r.err = w.ask()
	r.timer.Stop()
	close(r.done)
	w.mu.Lock()
	n := w.next
	w.next = nil
	if n == nil {
		w.running = false
	}
	w.mu.Unlock()
	if n != nil {
		go w.run(n)
	}
}

// timeout is the bound of a round.
func (w *Watch) timeout() time.Duration {
	if w.Timeout <= 0 {
		return 5 * time.Second
	}
	return w.Timeout
}

// ask runs one question on the watch's connection; only run calls it, one
// at a time. A failed connection is closed and the next question opens a
// new one, in a new epoch.
func (w *Watch) ask() (Stamp, error) {
	ctx := context.Background()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return Stamp{}, sql.ErrConnDone
	}
	if w.stmt == nil {
		if err := w.connect(ctx); err != nil {
			w.mu.Unlock()
			return Stamp{}, err
		}
	}
	stmt := w.stmt
	w.seq++
	s := Stamp{State: state{epoch: w.epoch}, Seq: w.seq}
	w.mu.Unlock()
	if err := stmt.QueryRowContext(ctx).Scan(&s.State.version); err != nil {
		w.mu.Lock()
		w.disconnect()
		w.mu.Unlock()
		return Stamp{}, err
	}
	return s, nil
}

// connect opens the watch's connection, in a pool of its own that keeps
// that one connection for good: the data version counts per connection.
// w.mu is held.
func (w *Watch) connect(ctx context.Context) error {
	if w.db == nil {
		w.db = sql.OpenDB(w.connector)
		w.db.SetMaxOpenConns(1)
		w.db.SetMaxIdleConns(1)
		w.db.SetConnMaxLifetime(0)
		w.db.SetConnMaxIdleTime(0)
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	stmt, err := conn.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		_ = conn.Close()
		return err
	}
	w.conn, w.stmt = conn, stmt
	w.epoch++
	return nil
}

// disconnect closes the watch's connection; w.mu is held.
func (w *Watch) disconnect() {
	if w.stmt != nil {
		_ = w.stmt.Close()
		_ = w.conn.Close()
		w.stmt, w.conn = nil, nil
	}
}

// Close closes the watch's connection; later rounds fail. A round running
// finishes first.
func (w *Watch) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.disconnect()
	if w.db != nil {
		return w.db.Close()
	}
	return nil
}
