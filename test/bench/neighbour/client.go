package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// dialer returns a dialer whose connections leave from the loopback
// address from (127.0.0.1, 127.0.0.2 …; Linux routes all of 127/8 to the
// loopback interface), so the server sees victim and attacker as two
// client addresses, as it would two machines: a per-address limit meant
// for the attacker is then not the victim's. rcvbuf > 0 sets the socket's
// receive buffer before it connects (a small window, for slow readers).
func dialer(from string, rcvbuf int) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	return d
}

// newClient returns an HTTP client whose connections leave from the
// address from; timeout bounds each request.
func newClient(from string, conns int, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         dialer(from, 0).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// statuses counts answers by status code, and failures without one.
type statuses struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *statuses) add(key string) {
	s.mu.Lock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[key]++
	s.mu.Unlock()
}

func (s *statuses) status(code int) { s.add(strconv.Itoa(code)) }

// snapshot returns a copy of the counts.
func (s *statuses) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.n))
	for k, v := range s.n {
		out[k] = v
	}
	return out
}

// formatCounts prints counts as "200:1234 429:56 err:1", status codes in
// order, then the rest.
func formatCounts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, aerr := strconv.Atoi(keys[i])
		b, berr := strconv.Atoi(keys[j])
		switch {
		case aerr == nil && berr == nil:
			return a < b
		case (aerr == nil) != (berr == nil):
			return aerr == nil
		}
		return keys[i] < keys[j]
	})
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}

// doJSON sends one request with a JSON body (nil: none) and bearer token
// (empty: none), reads the whole answer and returns its status and body.
func doJSON(ctx context.Context, c *http.Client, method, url, token string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// login returns an access token for username.
func login(ctx context.Context, c *http.Client, base, username, password string) (string, error) {
	code, body, err := doJSON(ctx, c, http.MethodPost, base+"/auth/login", "", map[string]string{"username": username, "password": password})
	if err != nil {
		return "", fmt.Errorf("login %s: %w", username, err)
	}
	if code != http.StatusCreated {
		return "", fmt.Errorf("login %s: status %d", username, code)
	}
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("login %s: no access token in the answer", username)
	}
	return tok.AccessToken, nil
}
