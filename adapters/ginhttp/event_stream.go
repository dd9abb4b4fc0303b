package ginhttp

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// An event stream is mostly idle, and what one costs while it waits
// limits how many a process holds: on HTTP/1.1 the handler takes the
// connection over and the stream parks in a small frame (wait); each
// event is one chunk written with one system call; the bytes are those
// net/http would send, with Connection: close. Other writers get the same
// stream through the ResponseWriter (ARCHITECTURE.md, "The change feed":
// memory per stream).

// chunkHead is the room left before an event for its chunk header.
const chunkHead = 18 // 16 hex digits and CRLF

// sink is where a stream's bytes go.
type sink interface {
	// send writes b[chunkHead:] to the client at once, within timeout
	// (b[:chunkHead] is free room for framing); false means the client is
	// gone or stalled, and that any part of b may have been sent.
	send(b []byte, timeout time.Duration) bool
}

// stream sends one subscription's events to one client.
type stream struct {
	s    *Server
	sub  *application.Subscription
	out  sink
	beat time.Duration
	// expires is the access token's expiry (zero: none).
	expires time.Time
	actor   domain.Actor
	// req is the request's context when the stream runs in its handler;
	// it ends when the client goes. On a connection taken over, closed
	// says it instead (watchClient).
	req    context.Context
	closed atomic.Bool
	// broken is set when a write failed or timed out: the client may hold
	// part of an event, so nothing more is written (not even the end of
	// the body) and the connection is closed.
	broken bool
	// logCtx carries the request id (and trace) for log lines.
	logCtx    context.Context
	requestID string
	timer     *time.Timer
	// beatAt is when the next heartbeat is due: beat after the last write.
	beatAt time.Time
	// authChanged is closed when the caller's authorisation may have
	// changed (StreamOptions.Changed); nil when nothing tells.
	authChanged <-chan struct{}
}

// run sends the stream until it ends. It parks in wait, whose frame is
// small, so that an idle stream's goroutine keeps a small stack; the work
// is done in turn, which has returned by then.
func (st *stream) run(ctx context.Context) {
	if !st.open() {
		return
	}
	st.timer = time.NewTimer(st.beat)
	defer st.timer.Stop()
	if f := st.s.stream.Changed; f != nil && st.actor.Authenticated() {
		// Taken, then checked once: a change made since the request was
		// authenticated is not missed.
		st.authChanged = f()
		if !st.authorised(ctx, time.Now(), true) {
			st.end("session ended")
			return
		}
	}
	for st.turn(ctx) {
		st.wait(ctx)
	}
}

// open sends the reconnection delay (`retry:`, applied by the client as
// soon as it reads it) and the opening comment.
func (st *stream) open() bool {
	return st.frame(func(b []byte) []byte {
		b = strconv.AppendInt(append(b, "retry: "...), st.s.stream.Retry.Milliseconds(), 10)
		return append(b, "\n: stream open\n"...)
	})
}

// wait parks until a change is queued, the subscription ends, the timer
// fires (heartbeat or token expiry) or ctx ends.
func (st *stream) wait(ctx context.Context) {
	select {
	case <-st.sub.Ready():
	case <-st.sub.Done():
	case <-st.timer.C:
	case <-st.authChanged:
	case <-ctx.Done():
	}
}

// turn sends what is due after a wake-up and sets the timer; false ends
// the stream.
func (st *stream) turn(ctx context.Context) bool {
	for {
		ev, ok, err := st.sub.TryNext(ctx)
		if err != nil {
			st.stop(err)
			return false
		}
		if !ok {
			break
		}
		if !st.event(&ev) {
			return false
		}
	}
	if err := ctx.Err(); err != nil {
		st.stop(err)
		return false
	}
	now := time.Now()
	if !st.expires.IsZero() && !now.Before(st.expires) {
		st.end("token expired")
		return false
	}
	beat := !now.Before(st.beatAt)
	if !st.authorised(ctx, now, beat) {
		st.end("session ended")
		return false
	}
	if beat {
		if !st.write(web.Heartbeat) {
			return false
		}
	}
	wait := st.beatAt.Sub(now)
	if !st.expires.IsZero() {
		wait = min(wait, st.expires.Sub(now))
	}
	st.timer.Reset(wait)
	return true
}

// authorised re-checks the caller when its authorisation may have
// changed (authChanged closed; the next channel is taken first, so a
// change during the check is not missed) and at each heartbeat (beat).
func (st *stream) authorised(ctx context.Context, now time.Time, beat bool) bool {
	f := st.s.stream.Recheck
	if f == nil || !st.actor.Authenticated() {
		return true
	}
	select {
	case <-st.authChanged:
		st.authChanged = st.s.stream.Changed()
	default:
		if !beat {
			return true
		}
	}
	return f(ctx, st.actor.Principal, now) == nil
}

// gone reports whether the client went away; nothing more is written.
func (st *stream) gone() bool {
	if st.req != nil {
		return st.req.Err() != nil
	}
	return st.closed.Load()
}

// stop ends the stream for err: nothing more when the client is gone,
// else the end event that says why.
func (st *stream) stop(err error) {
	switch {
	case st.gone(), st.broken:
	case st.s.streams.Err() != nil, errors.Is(err, application.ErrFeedClosed):
		st.end("shutdown")
	case errors.Is(err, application.ErrFeedLagging):
		st.end("lagging")
	default:
		st.s.log.ErrorContext(st.logCtx, "change feed failed", "err", err, "request_id", st.requestID)
		st.end("error")
	}
}

// write sends b (a whole event or comment) and restarts the heartbeat
// interval.
func (st *stream) write(p []byte) bool {
	return st.frame(func(b []byte) []byte { return append(b, p...) })
}

// frame sends what fill appends to a pooled buffer that starts with
// chunkHead bytes of room (sink).
func (st *stream) frame(fill func(b []byte) []byte) bool {
	buf := web.GetBuf()
	defer web.PutBuf(buf)
	*buf = fill(append((*buf)[:0], make([]byte, chunkHead)...))
	return st.send(*buf)
}

// send writes b whole or marks the stream broken; once broken it writes
// nothing. An end event after a lagging subscription is written only when
// the last write was complete, and is cut like any other write when it
// cannot be written whole in time.
func (st *stream) send(b []byte) bool {
	if st.broken {
		return false
	}
	if !st.out.send(b, st.s.stream.WriteTimeout) {
		st.broken = true
		// Debug: a client closing its stream also ends up here.
		st.s.log.DebugContext(st.logCtx, "change feed: a write to the client failed or timed out; connection cut")
		return false
	}
	st.beatAt = time.Now().Add(st.beat)
	return true
}

// event sends one change, or a reset.
func (st *stream) event(ev *application.FeedEvent) bool {
	return st.frame(func(b []byte) []byte {
		if ev.Reset {
			b = strconv.AppendInt(append(b, "event: reset\ndata: {\"oldest\":"...), ev.Oldest, 10)
			return append(b, "}\n\n"...)
		}
		scratch := web.GetBuf()
		*scratch = appendEntry((*scratch)[:0], &ev.Change.Entry)
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, ev.Change.Rev, 10)
		b = append(b, "\nevent: "...)
		b = append(b, ev.Change.Kind.String()...)
		b = appendData(b, *scratch)
		web.PutBuf(scratch)
		return append(b, '\n')
	})
}

// end writes the end event (when nothing failed before); the stream then
// closes.
func (st *stream) end(reason string) {
	st.frame(func(b []byte) []byte {
		b = web.AppendString(append(b, "event: end\ndata: {\"reason\":"...), reason)
		return append(b, "}\n\n"...)
	})
}

// appendData appends payload as data lines: one per line of payload, so
// the client, which joins them with newlines, gets payload back.
func appendData(b, payload []byte) []byte {
	for {
		i := bytes.IndexAny(payload, "\r\n")
		b = append(b, "\ndata: "...)
		if i < 0 {
			b = append(b, payload...)
			return append(b, '\n')
		}
		b = append(b, payload[:i]...)
		if payload[i] == '\r' && i+1 < len(payload) && payload[i+1] == '\n' {
			i++
		}
		payload = payload[i+1:]
	}
}
