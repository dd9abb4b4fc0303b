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
	counts *statuses
}

// retryPause is how long an attacker waits after a refusal or a cut
// before it tries again: short, to keep the pressure on.
const retryPause = 250 * time.Millisecond

// abuses are the phases' attacks; each runs until ctx ends and has let go
// of every connection when it returns.
var abuses = map[string]func(ctx context.Context, a *attacker, c config){
	"lists":   slowLists,
	"fold":    foldQueries,
	"logins":  loginFlood,
	"streams": streamFlood,
}

// slowLists holds c.slowReaders lists of the attacker's entries open
// without reading them: after the status line nothing is read, and the
// socket's receive buffer is 4 KiB, so the server's writes block once
// the kernel's buffers are full (a list of 1000 entries is about
// 1000 × --data-bytes, far above them). A reader whose connection the
// server cuts (seen in the socket's TCP state, as nothing is read) opens
// a new one: "cut" counts those.
func slowLists(ctx context.Context, a *attacker, c config) {
	req := "GET /cache/user?limit=1000 HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + a.token + "\r\n\r\n"
	var wg sync.WaitGroup
	for range c.slowReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				conn, code, err := rawRequest(ctx, a.from, 4096, a.addr, req)
				if err != nil {
					if ctx.Err() == nil {
						a.counts.add("err")
					}
					sleep(ctx, retryPause)
					continue
				}
				a.counts.status(code)
				if code == http.StatusOK {
					for sleep(ctx, 500*time.Millisecond) && established(conn) {
					}
					if ctx.Err() == nil {
						a.counts.add("cut")
					}
				}
				conn.Close()
				if code != http.StatusOK {
					sleep(ctx, retryPause)
				}
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
// reading what they send (heartbeats); a stream that ends is opened
// again, and a refused one is retried after retryPause.
func streamFlood(ctx context.Context, a *attacker, c config) {
	req := "GET /cache/user/events HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + a.token + "\r\n\r\n"
	var wg sync.WaitGroup
	for range c.streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				conn, code, err := rawRequest(ctx, a.from, 0, a.addr, req)
				if err != nil {
					if ctx.Err() == nil {
						a.counts.add("err")
					}
					sleep(ctx, retryPause)
					continue
				}
				a.counts.status(code)
				if code == http.StatusOK {
					_, _ = io.Copy(io.Discard, conn)
					if ctx.Err() == nil {
						a.counts.add("ended")
					}
				}
				conn.Close()
				sleep(ctx, retryPause)
			}
		}()
	}
	wg.Wait()
}

// rawRequest dials addr from the address from, writes req and reads the
// status line; the connection is closed when ctx ends.
func rawRequest(ctx context.Context, from string, rcvbuf int, addr, req string) (net.Conn, int, error) {
	conn, err := dialer(from, rcvbuf).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (net.Conn, int, error) {
		stop()
		conn.Close()
		return nil, 0, err
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		return fail(err)
	}
	// A reader of 16 bytes (bufio's least) takes little more than the
	// status line off the socket.
	line, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	if err != nil {
		return fail(err)
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return fail(fmt.Errorf("bad status line %q", line))
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return fail(fmt.Errorf("bad status line %q", line))
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, code, nil
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
