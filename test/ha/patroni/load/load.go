package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// load runs the writers and refreshers and keeps what they saw.
type load struct {
	urls        []string
	client      *http.Client
	username    string
	password    string
	userID      string
	nonce       string // makes this run's keys unique in the database
	pace        time.Duration
	idempotency bool

	stopped atomic.Bool
	wg      sync.WaitGroup

	mu            sync.Mutex
	outs          []outcome
	acks          []ack
	unacked       []string // keys of writes never acknowledged
	retries       int      // write retries with the same Idempotency-Key
	selfConflicts int
	kill          time.Time     // zero until the leader is killed
	outageStart   time.Time     // the first failure sent after the kill
	recovered     chan struct{} // closed at the first success sent after outageStart
	transportLog  int           // transport errors logged so far
}

// record keeps an outcome, and notices the first success after the kill.
func (l *load) record(o outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outs = append(l.outs, o)
	if l.kill.IsZero() || o.Sent.Before(l.kill) {
		return
	}
	// As analyse defines it, give or take the order answers arrive in:
	// the first success sent after the first failure sent after the kill.
	if !o.ok() && (l.outageStart.IsZero() || o.Sent.Before(l.outageStart)) {
		l.outageStart = o.Sent
	}
	if o.ok() && !l.outageStart.IsZero() && o.Sent.After(l.outageStart) {
		select {
		case <-l.recovered:
		default:
			close(l.recovered)
		}
	}
}

// noteTransportError logs the first few transport errors (they name no
// secret: an address and a syscall error), so that a report's "transport
// error" can be read.
func (l *load) noteTransportError(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.transportLog < 5 {
		l.transportLog++
		log.Printf("transport error: %v", err)
	}
}

// markKill records the instant of the kill (when the kill command returned).
func (l *load) markKill(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kill = t
}

// pause sleeps d, or less if the load stops.
func (l *load) pause(d time.Duration) {
	const step = 50 * time.Millisecond
	for d > 0 && !l.stopped.Load() {
		s := min(d, step)
		time.Sleep(s)
		d -= s
	}
}

// login logs in through one replica; false when it was not answered 201.
func (l *load) login(ctx context.Context, replica int) (tokens, bool) {
	o, body := l.send(ctx, call{kind: kindLogin, replica: replica, method: http.MethodPost, path: "/auth/login",
		body: map[string]string{"username": l.username, "password": l.password}})
	l.record(o)
	var t tokens
	if o.Status != http.StatusCreated || json.Unmarshal(body, &t) != nil || t.AccessToken == "" {
		return tokens{}, false
	}
	return t, true
}

// writer creates entries with unique keys through one replica until the
// load stops. With --idempotency-key every POST carries the header, and a
// write answered 503 or not answered is sent again, same key and body,
// until it gets another answer: a 409 CACHE_ENTITY_ALREADY_EXISTS then is
// a self-conflict.
func (l *load) writer(ctx context.Context, n int, access string) {
	defer l.wg.Done()
	replica := n % len(l.urls)
	for seq := 0; !l.stopped.Load(); seq++ {
		key := fmt.Sprintf("ha-%s-w%d-%d", l.nonce, n, seq)
		c := call{kind: kindWrite, replica: replica, method: http.MethodPost, path: "/cache/user", token: access,
			body: map[string]any{"key": key, "type": "ha", "data": "written by test/ha/patroni/load",
				"assignee": map[string]string{"id": l.userID}}}
		if l.idempotency {
			// The draft's structured-field string: the key in quotes.
			c.idemKey = `"` + key + `"`
		}
		for attempt := 0; ; attempt++ {
			o, body := l.send(ctx, c)
			o.Retry = attempt > 0
			l.record(o)
			if o.Status == http.StatusCreated {
				var e struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(body, &e); err != nil || e.ID == "" {
					log.Printf("write %s: 201 without an id", key)
					l.noteUnacked(key)
				} else {
					l.noteAck(ack{Key: key, ID: e.ID})
				}
				break
			}
			if isSelfConflict(o) {
				l.noteSelfConflict(key)
				break
			}
			// 409 IDEMPOTENCY_KEY_IN_PROGRESS: another attempt with the key
			// has not ended yet (README, "Idempotent retries"); it is
			// retried too, and still reported as an answer other than 503.
			retry := o.Status == http.StatusServiceUnavailable || o.Status == 0 ||
				(o.Status == http.StatusConflict && o.Code == "IDEMPOTENCY_KEY_IN_PROGRESS")
			if !retry || !l.idempotency || l.stopped.Load() {
				l.noteUnacked(key)
				break
			}
			l.noteRetry()
			l.pause(l.pace)
		}
		l.pause(l.pace)
	}
}

func (l *load) noteAck(a ack) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acks = append(l.acks, a)
}

func (l *load) noteUnacked(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unacked = append(l.unacked, key)
}

func (l *load) noteRetry() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retries++
}

func (l *load) noteSelfConflict(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.selfConflicts++
	l.unacked = append(l.unacked, key)
}

// refresher logs in and exchanges its refresh token again and again,
// through each replica in turn, until the load stops. A refresh answered
// 503 or not answered is retried with the same token, as a client does; any
// other failure (401: the family is gone) logs in again.
func (l *load) refresher(ctx context.Context, n int) {
	defer l.wg.Done()
	var refresh string
	for turn := n; !l.stopped.Load(); turn++ {
		replica := turn % len(l.urls)
		if refresh == "" {
			t, ok := l.login(ctx, replica)
			if !ok {
				l.pause(l.pace)
				continue
			}
			refresh = t.RefreshToken
		}
		o, body := l.send(ctx, call{kind: kindRefresh, replica: replica, method: http.MethodPost, path: "/auth/refresh",
			body: map[string]string{"refreshToken": refresh}})
		l.record(o)
		switch {
		case o.Status == http.StatusCreated:
			var t tokens
			if json.Unmarshal(body, &t) != nil || t.RefreshToken == "" {
				log.Printf("refresh: 201 without a refresh token")
				refresh = ""
			} else {
				refresh = t.RefreshToken
			}
		case o.Status == http.StatusServiceUnavailable || o.Status == 0:
			// Keep the token: the exchange may or may not have happened,
			// and the reuse grace (README, configuration) covers a retry.
		default:
			refresh = ""
		}
		l.pause(l.pace)
	}
}

// snapshot copies what the load saw.
func (l *load) snapshot() (outs []outcome, acks []ack, unacked []string, retries, selfConflicts int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]outcome(nil), l.outs...), append([]ack(nil), l.acks...), append([]string(nil), l.unacked...),
		l.retries, l.selfConflicts
}

// procStart reads a process's start time (field 22 of /proc/PID/stat, in
// clock ticks since boot): the same PID with another start time is another
// process. Empty when the process is gone.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22 counted from the start: 20th after the command
}
