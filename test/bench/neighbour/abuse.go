package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// attacker is the user (and the anonymous client) that abuses the
// service beside the victim. Its answers are counted, not judged: 429
// and 422 are what a defended server gives it.
type attacker struct {
	addr   string // the server's host:port
	base   string
	from   string // the loopback address it connects from
	token  string
	keys   []string
	heavy  []string // the heavy accounts' tokens
	counts *statuses
	// accounts are the users of the sessions and churn phases, by phase.
	accounts map[string]*account
}

// retryPause is how long an attacker waits after a cut or a failed
// connection before it tries again: short, to keep the pressure on. A
// refusal is retried after its Retry-After (refusalPause): the abuse
// measured is holding lists and streams open, not a flood of refused
// requests, which the login phase measures.
const retryPause = 250 * time.Millisecond

// refusalPause is how long to wait after an answer that is not 200: its
// Retry-After in seconds, at most 5 s, or 1 s without one.
func refusalPause(h head) time.Duration {
	if n, err := strconv.Atoi(h.retryAfter); err == nil && n >= 0 {
		return min(time.Duration(n)*time.Second, 5*time.Second)
	}
	return time.Second
}

// abuses are the phases' attacks; each runs until ctx ends and has let go
// of every connection when it returns.
var abuses = map[string]func(ctx context.Context, a *attacker, c config){
	"lists":        slowLists,
	"fold":         foldQueries,
	"logins":       loginFlood,
	"streams":      streamFlood,
	"heavy":        heavyLists,
	"sessions":     loginLoop,
	"churn-expire": churn("churn-expire", churnVariants["churn-expire"]),
	"churn-idem":   churn("churn-idem", churnVariants["churn-idem"]),
	"churn-delete": churn("churn-delete", churnVariants["churn-delete"]),
}

// slowLists holds c.slowReaders lists of the attacker's entries open
// without reading them: after the answer's head nothing is read, and the
// socket's receive buffer is 4 KiB, so the server's writes block once
// the kernel's buffers are full (a list of 1000 entries is about
// 1000 × --data-bytes, far above them). A reader whose connection the
// server cuts (seen in the socket's TCP state, as nothing is read) opens
// a new one: "cut" counts those. A refused reader tries again after
// refusalPause.
func slowLists(ctx context.Context, a *attacker, c config) {
	req := "GET /cache/user?limit=1000 HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + a.token + "\r\n\r\n"
	var wg sync.WaitGroup
	for range c.slowReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				conn, h, err := rawRequest(ctx, a.from, 4096, a.addr, req)
				if err != nil {
					if ctx.Err() == nil {
						a.counts.add("err")
					}
					sleep(ctx, retryPause)
					continue
				}
				a.counts.status(h.code)
				if h.code != http.StatusOK {
					conn.Close()
					sleep(ctx, refusalPause(h))
					continue
				}
				// Bytes the server never reads: when it closes the
				// connection they are still in its socket, and Linux then
				// answers the close with a reset, which established sees
				// (a plain close would wait behind the unread answer).
				// net/http's background read takes one byte at most.
				_, _ = io.WriteString(conn, "\r\n\r\n\r\n\r\n")
				for sleep(ctx, 500*time.Millisecond) && established(conn) {
				}
				if ctx.Err() == nil {
					a.counts.add("cut")
				}
				conn.Close()
			}
		}()
	}
	wg.Wait()
}

// foldQueries runs c.foldWorkers closed loops of paged list queries
// (page=1, so each also counts its matches) whose five ORed conditions
// fold every one of the attacker's 250-character non-ASCII keys: three
// search terms that rarely occur ($contL, $endsL, $startsL), one key in
// other case ($eqL) and a type in other case ($eqL).
func foldQueries(ctx context.Context, a *attacker, c config) {
	client := newClient(a.from, c.foldWorkers, 30*time.Second)
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for w := range c.foldWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				code, _, err := doJSON(ctx, client, http.MethodGet, a.base+"/cache/user?"+foldQuery(r, a.keys), a.token, nil)
				switch {
				case ctx.Err() != nil:
				case err != nil:
					a.counts.add("err")
				default:
					a.counts.status(code)
				}
			}
		}()
	}
	wg.Wait()
}

// foldQuery returns one query string of foldQueries.
func foldQuery(r *rand.Rand, keys []string) string {
	q := url.Values{}
	q.Add("or", "key||$contL||"+foldWord(r, 4))
	q.Add("or", "key||$endsL||"+foldWord(r, 3))
	q.Add("or", "key||$startsL||"+foldWord(r, 5))
	q.Add("or", "key||$eqL||"+strings.ToUpper(keys[r.IntN(len(keys))]))
	q.Add("or", "type||$eqL||BENCH-"+strconv.Itoa(r.IntN(1000)))
	q.Set("page", "1")
	q.Set("limit", "10")
	q.Set("sort", "key,DESC")
	return q.Encode()
}

// loginFlood runs c.loginWorkers closed loops of failed logins without
// any token, each naming a new random 300-character username.
func loginFlood(ctx context.Context, a *attacker, c config) {
	client := newClient(a.from, c.loginWorkers, 30*time.Second)
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for w := range c.loginWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				body := map[string]string{"username": randomName(r, 300), "password": "not the password"}
				code, _, err := doJSON(ctx, client, http.MethodPost, a.base+"/auth/login", "", body)
				switch {
				case ctx.Err() != nil:
				case err != nil:
					a.counts.add("err")
				default:
					a.counts.status(code)
				}
			}
		}()
	}
	wg.Wait()
}

func randomName(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// streamFlood holds c.streams change-feed streams of the attacker open,
// reading what they send (heartbeats); a stream that ends ("ended") is
// opened again after retryPause, a refused one after refusalPause.
func streamFlood(ctx context.Context, a *attacker, c config) {
	req := "GET /cache/user/events HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + a.token + "\r\n\r\n"
	var wg sync.WaitGroup
	for range c.streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				conn, h, err := rawRequest(ctx, a.from, 0, a.addr, req)
				if err != nil {
					if ctx.Err() == nil {
						a.counts.add("err")
					}
					sleep(ctx, retryPause)
					continue
				}
				a.counts.status(h.code)
				if h.code != http.StatusOK {
					conn.Close()
					sleep(ctx, refusalPause(h))
					continue
				}
				_, _ = io.Copy(io.Discard, h.body)
				if ctx.Err() == nil {
					a.counts.add("ended")
				}
				conn.Close()
				sleep(ctx, retryPause)
			}
		}()
	}
	wg.Wait()
}

// head is what rawRequest read of an answer.
type head struct {
	code       int
	retryAfter string
	body       io.Reader // the rest of the answer
}

// rawRequest dials addr from the address from, writes req and reads the
// answer's status line and headers; the connection is closed when ctx
// ends.
func rawRequest(ctx context.Context, from string, rcvbuf int, addr, req string) (net.Conn, head, error) {
	var h head
	conn, err := dialer(from, rcvbuf).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, h, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (net.Conn, head, error) {
		stop()
		conn.Close()
		return nil, h, err
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		return fail(err)
	}
	// A reader of 256 bytes takes little more than the head off the
	// socket.
	r := bufio.NewReaderSize(conn, 256)
	line, err := r.ReadString('\n')
	if err != nil {
		return fail(err)
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return fail(fmt.Errorf("bad status line %q", line))
	}
	if h.code, err = strconv.Atoi(f[1]); err != nil {
		return fail(fmt.Errorf("bad status line %q", line))
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return fail(err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Retry-After") {
			h.retryAfter = strings.TrimSpace(value)
		}
	}
	_ = conn.SetDeadline(time.Time{})
	h.body = r
	return conn, h, nil
}

// established reports whether conn is still an established TCP
// connection: a server that cuts it moves it to CLOSE_WAIT (its FIN) or
// CLOSE (its RST) whether or not the data before was read.
func established(conn net.Conn) bool {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	state := -1
	_ = rc.Control(func(fd uintptr) {
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			state = int(info.State)
		}
	})
	return state == tcpEstablished
}

// tcpEstablished is TCP_ESTABLISHED of Linux's include/net/tcp_states.h.
const tcpEstablished = 1

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
