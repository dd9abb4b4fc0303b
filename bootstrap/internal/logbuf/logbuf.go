// Package logbuf batches serve's log lines: many lines, one write
// (ARCHITECTURE.md, "Decisions").
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Writer collects log lines in a buffer of bounded size and writes them to
// its output in one write: when the next line would not fit, interval
// after the first line buffered, on Flush and on Close. Each Write (one
// slog record) is kept whole; one larger than the buffer is written alone.
// Safe for concurrent use.
type Writer struct {
	mu       sync.Mutex
	out      io.Writer
	buf      []byte
	interval time.Duration
	timer    *time.Timer
	armed    bool // the timer will flush what is buffered
	closed   bool
}

// New returns a Writer to out holding at most size bytes for at most
// interval.
func New(out io.Writer, size int, interval time.Duration) *Writer {
	w := &Writer{out: out, buf: make([]byte, 0, size), interval: interval}
	w.timer = time.AfterFunc(time.Hour, func() { _ = w.Flush() })
	w.timer.Stop()
	return w
}

// Write buffers p. Its error is that of writing earlier lines out, if it
// had to; after Close it writes p straight through.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Write(p)
	}
	var err error
	if len(w.buf)+len(p) > cap(w.buf) {
		err = w.flushLocked()
	}
	if len(p) > cap(w.buf) {
		if _, e := w.out.Write(p); e != nil {
			return 0, e
		}
		return len(p), err
	}
	w.buf = append(w.buf, p...)
	if !w.armed {
		w.armed = true
		w.timer.Reset(w.interval)
	}
	return len(p), err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// Close flushes and stops buffering: later lines are written at once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.timer.Stop()
	return w.flushLocked()
}

// flushLocked writes the buffer out; lines whose write fails are dropped,
// as an unbuffered write would drop them.
func (w *Writer) flushLocked() error {
	w.armed = false
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// FlushAt wraps h so that a record at level or above is written out at
// once, with the lines before it.
func FlushAt(h slog.Handler, w *Writer, level slog.Level) slog.Handler {
	return flushing{h, w, level}
}

type flushing struct {
	slog.Handler
	w     *Writer
	level slog.Level
}

func (h flushing) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= h.level {
		_ = h.w.Flush()
	}
	return err
}

func (h flushing) WithAttrs(as []slog.Attr) slog.Handler {
	return flushing{h.Handler.WithAttrs(as), h.w, h.level}
}

func (h flushing) WithGroup(name string) slog.Handler {
	return flushing{h.Handler.WithGroup(name), h.w, h.level}
}
