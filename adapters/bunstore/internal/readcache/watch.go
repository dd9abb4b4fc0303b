// Package readcache keeps what the point reads of an SQLite file found,
// for as long as the file has not changed since (ARCHITECTURE.md, "The
// entry cache of SQLite point reads"). Whether it changed is read from the
// file itself, with a connection of its own open that never writes: the
// WAL-index header (header.go) differs after any commit of any connection,
// of this process or another (the CLI's import, a second server, the
// sqlite3 shell); where it cannot be read, PRAGMA data_version on that
// connection, which differs between two calls in the same cases.
package readcache

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
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
	// hdr is the WAL-index header when the state was read from it;
	// version is then zero.
	hdr header
}

// Watch tells an SQLite file's state, with a connection of its own open.
// While that connection is open on a file in WAL mode, a reader's state
// is the WAL-index header it reads (header.go): no round, no wait. Else
// the watch asks the data version on its connection: readers that arrive
// while a question runs share the next one, so the file is asked once per
// round however many readers wait, and every reader's answer comes from a
// question asked after it arrived.
type Watch struct {
	connector driver.Connector
	// Timeout bounds each round; zero is 5 s.
	Timeout time.Duration

	// header reads the header; nil while the connection is closed or
	// the file is not in WAL mode.
	header atomic.Pointer[headerSource]
	// rounds makes the watch ask the data version only (tests).
	rounds bool
	// seen is the last state a reader read from the header and the Seq
	// given to it.
	seen atomic.Pointer[seen]

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

// headerSource is the header of the file as one opening of the watch's
// connection reads it: states of two openings are never equal.
type headerSource struct {
	shm   *shm
	epoch uint64
}

type seen struct {
	state state
	seq   uint64
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

// Now returns the file's state read after Now was called: the WAL-index
// header, or else the answer of a question asked after that. It fails
// when the question fails or ctx ends first; the reader then reads
// without the cache.
func (w *Watch) Now(ctx context.Context) (Stamp, error) {
	if s, ok := w.fromHeader(); ok {
		return s, nil
	}
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

// fromHeader returns the state of the WAL-index header, read now, when
// the watch's connection is open and the header can be read. A header
// that differs from the last one read gets the next Seq, so that the
// cache keeps the entries of the newest state it was given.
func (w *Watch) fromHeader() (Stamp, bool) {
	src := w.header.Load()
	if src == nil {
		return Stamp{}, false
	}
	h, ok := src.shm.read()
	if !ok {
		return Stamp{}, false
	}
	st := state{epoch: src.epoch, hdr: h}
	for {
		last := w.seen.Load()
		if last != nil && last.state == st {
			return Stamp{State: st, Seq: last.seq}, true
		}
		w.mu.Lock()
		w.seq++
		n := &seen{state: st, seq: w.seq}
		w.mu.Unlock()
		if w.seen.CompareAndSwap(last, n) {
			return Stamp{State: st, Seq: n.seq}, true
		}
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
	// Once connected, the header answers when it can be read (the
	// first round connects).
	if h, ok := w.fromHeader(); ok {
		return h, nil
	}
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
	if w.rounds {
		return nil
	}
	if f := openHeader(ctx, conn, stmt); f != nil {
		w.header.Store(&headerSource{shm: f, epoch: w.epoch})
	}
	return nil
}

// openHeader opens the WAL-index of conn's file when the file is in WAL
// mode, once conn has read it (stmt asks the data version). While conn
// stays open, SQLite keeps that index where it is (an open connection in
// WAL mode holds the file's shared lock, so no other can reset or remove
// the index, nor leave WAL mode). It returns nil when the file is not in WAL mode or its index
// cannot be read, and on Windows, where a descriptor kept open would stop
// SQLite from removing the index at its last close and nothing here has
// been tried: the watch then asks the data version.
func openHeader(ctx context.Context, conn *sql.Conn, stmt *sql.Stmt) *shm {
	if runtime.GOOS == "windows" {
		return nil
	}
	var mode, path string
	var version int64
	if stmt.QueryRowContext(ctx).Scan(&version) != nil ||
		conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode) != nil || mode != "wal" ||
		conn.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path) != nil ||
		path == "" {
		return nil
	}
	f, err := openSHM(path)
	if err != nil {
		return nil
	}
	if _, ok := f.read(); !ok {
		return nil
	}
	return f
}

// disconnect closes the watch's connection; w.mu is held.
func (w *Watch) disconnect() {
	w.header.Store(nil)
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
