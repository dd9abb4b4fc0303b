package main

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// victim is the well-behaved user whose service is measured.
type victim struct {
	client   *http.Client
	base     string
	token    string
	ids      []string
	username string
	password string
	getRate  int
	logins   int
}

// sample is one victim request: its kind, latency and whether it
// succeeded (GET 200, login 201, within the client's 10 s timeout).
type sample struct {
	login   bool
	latency time.Duration
	ok      bool
	status  string
}

// run drives the victim's load for d: an open loop, each request started
// at its due time whatever the earlier ones are doing (so a slow server
// cannot slow the load down and hide its own latency). A request's
// latency runs from its start to the last byte of its answer.
func (v *victim) run(ctx context.Context, d time.Duration) []sample {
	var (
		mu  sync.Mutex
		out []sample
		wg  sync.WaitGroup
	)
	record := func(s sample) {
		mu.Lock()
		out = append(out, s)
		mu.Unlock()
	}
	start := time.Now()
	schedule := func(rate int, fire func()) {
		defer wg.Done()
		if rate <= 0 {
			return
		}
		interval := time.Second / time.Duration(rate)
		for i := 0; ; i++ {
			due := start.Add(time.Duration(i) * interval)
			if due.Sub(start) >= d {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(due)):
			}
			wg.Add(1)
			go func() { defer wg.Done(); fire() }()
		}
	}
	r := rand.New(rand.NewPCG(uint64(start.UnixNano()), 1))
	var rmu sync.Mutex
	wg.Add(2)
	go schedule(v.getRate, func() {
		rmu.Lock()
		id := v.ids[r.IntN(len(v.ids))]
		rmu.Unlock()
		record(v.do(ctx, false, http.MethodGet, v.base+"/cache/user/"+id, v.token, "", http.StatusOK))
	})
	creds, _ := json.Marshal(map[string]string{"username": v.username, "password": v.password})
	go schedule(v.logins, func() {
		record(v.do(ctx, true, http.MethodPost, v.base+"/auth/login", "", string(creds), http.StatusCreated))
	})
	wg.Wait()
	return out
}

// do sends one request and measures it.
func (v *victim) do(ctx context.Context, isLogin bool, method, url, token, body string, want int) sample {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return sample{login: isLogin, status: "err"}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	t0 := time.Now()
	resp, err := v.client.Do(req)
	if err != nil {
		return sample{login: isLogin, latency: time.Since(t0), status: "err"}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s := sample{login: isLogin, latency: time.Since(t0), status: strconv.Itoa(resp.StatusCode)}
	s.ok = err == nil && resp.StatusCode == want
	if err != nil {
		s.status = "err"
	}
	return s
}

// waitCalm sends one GET by id of the victim at a time until three in a
// row answer 200 within calmLatency, or until limit has passed, so that work an
// abuse left in the server (queries the database is still running for
// requests already given up) does not spill into the next phase.
func (v *victim) waitCalm(ctx context.Context, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for calm := 0; time.Since(start) < limit && ctx.Err() == nil; {
		s := v.do(ctx, false, http.MethodGet, v.base+"/cache/user/"+v.ids[0], v.token, "", http.StatusOK)
		if calm = calm + 1; !s.ok || s.latency >= calmLatency {
			calm = 0
		}
		if calm == 3 {
			return time.Since(start), true
		}
		sleep(ctx, 100*time.Millisecond)
	}
	return time.Since(start).Round(time.Second), false
}

// calmLatency is the answer time of a GET by id that counts as a calm
// server: well above the quiet p99 on a busy two-core machine (a few ms).
const calmLatency = 50 * time.Millisecond
