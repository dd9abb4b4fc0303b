package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// serveOnce accepts one connection on a loopback listener, reads the
// request's head and hands the connection to answer.
func serveOnce(t *testing.T, answer func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		r := bufio.NewReader(conn)
		for {
			line, err := r.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		answer(conn)
	}()
	return l.Addr().String()
}

func TestRawRequestReadsTheStatusAndRetryAfter(t *testing.T) {
	t.Parallel()
	addr := serveOnce(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nretry-after: 3\r\nContent-Length: 2\r\n\r\n{}")
		time.Sleep(time.Second)
		c.Close()
	})
	conn, h, err := rawRequest(context.Background(), "127.0.0.1", 0, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if h.code != 429 || h.retryAfter != "3" {
		t.Errorf("head = %d, Retry-After %q; want 429, 3", h.code, h.retryAfter)
	}
	if got := refusalPause(h); got != 3*time.Second {
		t.Errorf("refusalPause = %v, want 3s", got)
	}
	if body, _ := io.ReadAll(h.body); string(body) != "{}" {
		t.Errorf("body = %q, want {}", body)
	}
}

func TestRefusalPause(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"": time.Second, "2": 2 * time.Second, "3600": 5 * time.Second, "soon": time.Second} {
		if got := refusalPause(head{retryAfter: in}); got != want {
			t.Errorf("Retry-After %q: pause %v, want %v", in, got, want)
		}
	}
}

func TestEstablishedSeesAServerCutAnUnreadAnswer(t *testing.T) {
	t.Parallel()
	cut := make(chan struct{})
	addr := serveOnce(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		// More than the client's 4 KiB window, then the cut, as the
		// server does to a list reader past its write deadline.
		_ = c.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
		_, _ = io.WriteString(c, strings.Repeat("x", 8<<20))
		<-cut
		c.Close()
	})
	conn, h, err := rawRequest(context.Background(), "127.0.0.1", 4096, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if h.code != 200 {
		t.Fatalf("status %d, want 200", h.code)
	}
	if !established(conn) {
		t.Fatal("a connection the server holds is not established")
	}
	// What slowLists sends after the head, for the server to leave unread.
	if _, err := io.WriteString(conn, "\r\n\r\n\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	close(cut)
	for deadline := time.Now().Add(10 * time.Second); established(conn); {
		if time.Now().After(deadline) {
			t.Fatal("the cut connection still looks established after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDialerLeavesFromTheGivenLoopbackAddress(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			got <- c.RemoteAddr().(*net.TCPAddr).IP.String()
			c.Close()
		}
	}()
	c, err := dialer("127.0.0.2", 0).Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ip := <-got; ip != "127.0.0.2" {
		t.Errorf("the server saw %s, want 127.0.0.2", ip)
	}
}
