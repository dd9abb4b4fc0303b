package ginhttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
)

// writerSink sends through the ResponseWriter, flushing each event.
type writerSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (o writerSink) send(b []byte, timeout time.Duration) bool {
	_ = o.rc.SetWriteDeadline(time.Now().Add(timeout))
	_, err := o.w.Write(b[chunkHead:])
	if err == nil {
		err = o.rc.Flush()
	}
	if err != nil {
		// net/http finishes the response when the handler returns (its
		// buffered rest, the terminating chunk). A deadline in the past
		// makes sure none of it reaches the client after a partial event;
		// the failed write also keeps net/http from reusing the
		// connection, so it closes it.
		_ = o.rc.SetWriteDeadline(time.Unix(1, 0))
		return false
	}
	return true
}

// connSink sends chunks on a connection taken over from net/http.
type connSink struct{ conn net.Conn }

func (o connSink) send(b []byte, timeout time.Duration) bool {
	if len(b) == chunkHead {
		return true // an empty chunk would end the body
	}
	_ = o.conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err := o.conn.Write(frameChunk(b))
	return err == nil
}

// frameChunk frames b[chunkHead:] as one HTTP/1.1 chunk in place: the
// chunk header goes into the room before it, CRLF after it.
func frameChunk(b []byte) []byte {
	var h [chunkHead]byte
	head := strconv.AppendUint(h[:0], uint64(len(b)-chunkHead), 16)
	head = append(head, '\r', '\n')
	start := chunkHead - len(head)
	copy(b[start:], head)
	return append(b[start:], '\r', '\n')
}

// lastChunk ends a chunked body.
var lastChunk = []byte("0\r\n\r\n")

// canHijack reports whether w ends in net/http's HTTP/1 writer, which can
// hand its connection over (Gin's writer claims to for any writer).
func canHijack(w http.ResponseWriter) bool {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	_, ok := w.(http.Hijacker)
	return ok
}

// writeHead writes the response's status line and header on a connection
// taken over: h as the handler set it, with the framing net/http would
// add.
func writeHead(conn net.Conn, h http.Header, timeout time.Duration) error {
	h["Date"] = []string{time.Now().UTC().Format(http.TimeFormat)}
	h["Transfer-Encoding"] = []string{"chunked"}
	h["Connection"] = []string{"close"}
	buf := web.GetBuf()
	defer web.PutBuf(buf)
	*buf = append(*buf, "HTTP/1.1 200 OK\r\n"...)
	if err := h.Write(appendWriter{buf}); err != nil {
		return err
	}
	*buf = append(*buf, "\r\n"...)
	_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err := conn.Write(*buf)
	return err
}

// appendWriter is an io.Writer appending to a pooled buffer.
type appendWriter struct{ b *[]byte }

func (w appendWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// serveConn runs a stream on a connection taken over from net/http, in
// its own goroutine, and writes the request's access line when it ends.
func (st *stream) serveConn(conn net.Conn, line requestLine) {
	defer func() {
		if rec := recover(); rec != nil {
			st.s.log.ErrorContext(st.logCtx, "panic serving request", "method", line.method, "route", line.route,
				"panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
		}
		_ = conn.Close()
		st.sub.Close()
		st.s.logAccess(st.logCtx, line.method, line.route, http.StatusOK, "", time.Since(line.start), line.clientIP)
		st.s.streamDone()
	}()
	ctx, cancel := context.WithCancel(st.logCtx)
	defer cancel()
	go st.watchClient(conn, cancel)
	st.run(ctx)
	// After a failed or timed-out write the client may hold part of an
	// event: the terminating chunk would let it take that part as a whole
	// event (and its id as delivered). The connection is closed with
	// nothing more (README, "Change feed").
	if !st.closed.Load() && !st.broken {
		_ = conn.SetWriteDeadline(time.Now().Add(st.s.stream.WriteTimeout))
		_, _ = conn.Write(lastChunk)
	}
}

// watchClient reads conn until the client closes it, then marks the
// stream gone and cancels it. A client that sends anything is no longer
// watched (as net/http does with a pipelined request); its going is then
// noticed at the next write.
func (st *stream) watchClient(conn net.Conn, cancel context.CancelFunc) {
	var b [1]byte
	if n, err := conn.Read(b[:]); n == 0 && err != nil {
		st.closed.Store(true)
		cancel()
	}
}

// streamStarted counts a stream running on its own goroutine;
// streamDone, its end. WaitStreams waits for them at shutdown, as
// http.Server.Shutdown does not wait for connections taken over.
func (s *Server) streamStarted() {
	s.streamsMu.Lock()
	s.openStreams++
	s.streamsMu.Unlock()
}

func (s *Server) streamDone() {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	s.openStreams--
	if s.openStreams == 0 && s.streamsIdle != nil {
		close(s.streamsIdle)
		s.streamsIdle = nil
	}
}

// WaitStreams waits, after CloseStreams, until every event stream has
// sent its end event and closed, or ctx ends (then it returns ctx's
// error). http.Server.Shutdown does not wait for them: a stream runs on a
// connection taken over from the server.
func (s *Server) WaitStreams(ctx context.Context) error {
	s.streamsMu.Lock()
	if s.openStreams == 0 {
		s.streamsMu.Unlock()
		return nil
	}
	if s.streamsIdle == nil {
		s.streamsIdle = make(chan struct{})
	}
	idle := s.streamsIdle
	s.streamsMu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
