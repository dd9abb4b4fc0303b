package limits

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
)

// Listener returns ln holding each client address to
// Options.ConnsPerAddress open connections, counted from accept to close.
// Serve the Handler on it (bootstrap/httpfx does). A connection beyond the
// cap is answered a fixed 429 before any HTTP is read; a trusted proxy's
// connections are not counted (ARCHITECTURE.md, "Per-caller caps").
// Without a connection cap Listener returns ln itself.
func (s *Caps) Listener(ln net.Listener) net.Listener {
	if s.conns == nil {
		return ln
	}
	return &capListener{Listener: ln, conns: s.conns, proxies: s.proxies,
		refusal: refusalResponse(s.tooManyConns.Message), refusing: make(chan struct{}, maxRefusing)}
}

// Bounds of a refusal.
const (
	// maxRefusing bounds the refused connections waiting for their client
	// to read the answer and close.
	maxRefusing = 64
	// refuseLinger bounds that wait.
	refuseLinger = time.Second
	// refuseDrain bounds what is read from a refused client.
	refuseDrain = 64 << 10
)

// refusalResponse is the whole answer to a connection beyond the cap, in
// the error envelope of every other answer.
func refusalResponse(msg string) []byte {
	body := []byte(`{"statusCode":429,"message":`)
	body = web.AppendString(body, msg)
	body = append(body, `,"errorCode":"`+CodeTooManyRequests+`"}`...)
	head := "HTTP/1.1 429 Too Many Requests\r\n" +
		"Content-Type: application/json; charset=utf-8\r\n" +
		"Retry-After: " + strconv.FormatInt(web.RetryAfterSeconds(capRetryAfter), 10) + "\r\n" +
		"Connection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	return append([]byte(head), body...)
}

// capListener is Caps.Listener's listener.
type capListener struct {
	net.Listener
	conns    *keyLimiter
	proxies  web.Proxies
	refusal  []byte
	refusing chan struct{}
}

// Accept returns the next connection within the cap; refused ones are
// handed to refuse and never returned.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer, ok := peerAddr(c)
		if !ok || l.proxies.Trusted(peer) {
			return c, nil
		}
		key := peer.String()
		if l.conns.acquire(key) {
			return &capConn{Conn: c, conns: l.conns, key: key}, nil
		}
		l.refuse(c)
	}
}

// peerAddr is the connection's remote IP address, IPv4-mapped addresses
// as IPv4.
func peerAddr(c net.Conn) (netip.Addr, bool) {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		a := ta.AddrPort().Addr()
		return a.Unmap().WithZone(""), a.IsValid()
	}
	return web.ParseHop(c.RemoteAddr().String())
}

// refuse answers c 429 and closes it, on a goroutine of its own (see
// Caps.Listener).
func (l *capListener) refuse(c net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		_ = c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refuseLinger))
		if _, err := c.Write(l.refusal); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.CopyN(io.Discard, c, refuseDrain)
	}()
}

// capConn gives its address's place back when it is closed, once,
// however often Close is called (net/http and a stream may both).
//
// It keeps what net/http looks for on a *net.TCPConn: CloseWrite and
// CloseRead (net/http half-closes after answering 431 to an over-long
// header, whose body ends with the connection; without it the client
// reads a reset instead) and ReadFrom (sendfile).
type capConn struct {
	net.Conn
	conns  *keyLimiter
	key    string
	closed atomic.Bool
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.conns.release(c.key)
	}
	return err
}

func (c *capConn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return errors.ErrUnsupported
}

func (c *capConn) CloseRead() error {
	if hc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return errors.ErrUnsupported
}

func (c *capConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}
