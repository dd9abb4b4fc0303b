package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ack is an entry the service answered 201 for, with the body it sent.
type ack struct {
	id   string
	body []byte
}

// Issue 2: entries are written by eight clients as fast as they go, the
// server is killed with SIGKILL in the middle, and restarted on the same
// SQLite file: every entry answered 201 is there and equal, field for
// field, to what the 201 said; at most the one request each client had in
// flight at the kill may have left an entry nobody was told about.
func TestEveryAcknowledgedEntrySurvivesSIGKILLOnSQLite(t *testing.T) {
	t.Parallel()
	const (
		writers = 8
		// The kill comes once this many entries are acknowledged, or
		// after killAfter, whichever is first; either way writers are
		// still writing.
		killAtAcks = 1500
		killAfter  = 1500 * time.Millisecond
	)
	dir := t.TempDir()
	cfg := serverConfig{Dir: dir, YAML: publicYAML,
		Args: []string{"--database", "sqlite:" + filepath.Join(dir, "durable.db")}}
	s := startServer(t, cfg)

	var (
		acked   atomic.Int64
		killed  atomic.Bool
		wg      sync.WaitGroup
		mu      sync.Mutex
		unknown []string // failures before the kill
	)
	assignees := make([]string, writers)
	acks := make([][]ack, writers)
	client := newClient()
	for w := range writers {
		assignees[w] = newUUID()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				// Varied data and expiry, so every column is compared.
				data := fmt.Sprintf(`{"writer":%d,"n":%d,"text":"entry \"%d\" \u00e9","list":[1,2.5,null,true]}`, w, n, n)
				exp := `null`
				if n%2 == 1 {
					exp = `"1d"`
				}
				r, err := send(client, http.MethodPost, s.URL+"/cache/user",
					body(fmt.Sprintf("k-%d", n), "durable", assignees[w], data, exp))
				if err != nil {
					if !killed.Load() {
						mu.Lock()
						unknown = append(unknown, err.Error())
						mu.Unlock()
					}
					return
				}
				if r.Status != http.StatusCreated {
					mu.Lock()
					unknown = append(unknown, fmt.Sprintf("POST answered %d: %s", r.Status, short(r.Body)))
					mu.Unlock()
					return
				}
				var e entry
				if err := json.Unmarshal(r.Body, &e); err != nil || e.ID == "" {
					mu.Lock()
					unknown = append(unknown, fmt.Sprintf("201 without an entry: %s", short(r.Body)))
					mu.Unlock()
					return
				}
				acks[w] = append(acks[w], ack{id: e.ID, body: r.Body})
				acked.Add(1)
			}
		}()
	}

	deadline := time.Now().Add(killAfter)
	for acked.Load() < killAtAcks && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	killed.Store(true)
	s.kill(t)
	wg.Wait()
	for _, u := range unknown {
		t.Errorf("before the kill: %s", u)
	}
	if acked.Load() == 0 {
		t.Fatal("no entry was acknowledged before the kill")
	}
	t.Logf("SIGKILL after %d acknowledged entries", acked.Load())

	s = startServer(t, cfg)
	for w := range writers {
		for _, a := range acks[w] {
			r := mustSend(t, client, http.MethodGet, s.URL+"/cache/user/"+a.id, nil)
			if r.Status != http.StatusOK {
				t.Errorf("acknowledged entry %s: GET answered %d after the restart", a.id, r.Status)
				continue
			}
			if diff, err := sameFields(a.body, r.Body); err != nil || len(diff) > 0 {
				t.Errorf("acknowledged entry %s differs after the restart in %v (%v):\n201: %s\nGET: %s",
					a.id, diff, err, a.body, r.Body)
			}
		}
		var page struct{ Total int }
		r := mustSend(t, client, http.MethodGet, s.URL+"/cache/user?page=1&limit=1&assignee.id="+assignees[w], nil).
			want(t, http.StatusOK)
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatalf("paged list: %v: %s", err, short(r.Body))
		}
		if n := len(acks[w]); page.Total < n || page.Total > n+1 {
			t.Errorf("writer %d: %d entries stored after the restart, %d acknowledged: want %d or %d",
				w, page.Total, n, n, n+1)
		}
	}
}
