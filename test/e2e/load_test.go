package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// writeLoad is writers POSTing entries as fast as they are answered, for
// the fault tests: it records every acknowledged entry, every status and
// the longest request, and flags any answer that a database outage must
// not give (a 500, a 503 without Retry-After or with another errorCode, a
// transport error).
type writeLoad struct {
	url  string
	stop chan struct{}
	wg   sync.WaitGroup

	acked atomic.Int64

	mu       sync.Mutex
	acks     []ack
	statuses map[int]int
	longest  time.Duration
	bad      []string
}

// startWriteLoad starts writers on /cache/user of url with data of about
// dataBytes bytes per entry. finish stops them; cleanup does too.
func startWriteLoad(t *testing.T, url string, writers, dataBytes int) *writeLoad {
	t.Helper()
	l := &writeLoad{url: url, stop: make(chan struct{}), statuses: map[int]int{}}
	client := newClient()
	pad := strings.Repeat("x", dataBytes)
	for w := range writers {
		assignee := newUUID()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for n := 0; ; n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				b := body(fmt.Sprintf("k-%d-%d", w, n), "fault", assignee, fmt.Sprintf(`{"w":%d,"n":%d,"pad":%q}`, w, n, pad), "null")
				start := time.Now()
				r, err := send(client, http.MethodPost, url+"/cache/user", b)
				l.record(start, r, err)
				if err != nil || r.Status != http.StatusCreated {
					time.Sleep(5 * time.Millisecond) // a client pausing a little between retries
				}
			}
		}()
	}
	t.Cleanup(func() { l.finish() })
	return l
}

func (l *writeLoad) record(start time.Time, r reply, err error) {
	took := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.longest = max(l.longest, took)
	if err != nil {
		l.bad = append(l.bad, err.Error())
		return
	}
	l.statuses[r.Status]++
	switch r.Status {
	case http.StatusCreated:
		var e entry
		if err := json.Unmarshal(r.Body, &e); err != nil || e.ID == "" {
			l.bad = append(l.bad, "201 without an entry: "+short(r.Body))
			return
		}
		l.acks = append(l.acks, ack{id: e.ID, body: r.Body})
		l.acked.Add(1)
	case http.StatusServiceUnavailable:
		if r.errorCode() != "DATABASE_UNAVAILABLE" || r.Header.Get("Retry-After") == "" {
			l.bad = append(l.bad, fmt.Sprintf("503 %q, Retry-After %q", short(r.Body), r.Header.Get("Retry-After")))
		}
	case http.StatusInsufficientStorage:
		if r.errorCode() != "STORAGE_FULL" {
			l.bad = append(l.bad, "507 "+short(r.Body))
		}
	default:
		l.bad = append(l.bad, fmt.Sprintf("%d %s", r.Status, short(r.Body)))
	}
}

// waitAcked waits until at least n entries are acknowledged in all.
func (l *writeLoad) waitAcked(t *testing.T, n int64, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for l.acked.Load() < n {
		if time.Since(start) > bound {
			t.Fatalf("only %d of %d entries acknowledged within %s; statuses %v", l.acked.Load(), n, bound, l.snapshot())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func (l *writeLoad) snapshot() map[int]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int]int, len(l.statuses))
	for k, v := range l.statuses {
		out[k] = v
	}
	return out
}

// finish stops the writers and waits for them.
func (l *writeLoad) finish() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// verifyAcks asserts that every acknowledged entry reads back equal,
// field for field, to its 201.
func verifyAcks(t *testing.T, url string, acks []ack) {
	t.Helper()
	client := newClient()
	lost := 0
	for _, a := range acks {
		r := mustSend(t, client, http.MethodGet, url+"/cache/user/"+a.id, nil)
		if r.Status != http.StatusOK {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged entry %s: GET answered %d %s", a.id, r.Status, short(r.Body))
			}
			continue
		}
		if diff, err := sameFields(a.body, r.Body); err != nil || len(diff) > 0 {
			t.Errorf("entry %s differs from its 201 in %v (%v)", a.id, diff, err)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged entries lost", lost, len(acks))
	}
}
