package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// SIGTERM while requests are in flight: a POST whose body is only half
// sent, and large list answers nobody has read yet. The server stops
// accepting, lets all of them finish, and exits with status 0; the
// entry of the half-sent POST is committed.
func TestSIGTERMLetsInFlightRequestsFinish(t *testing.T) {
	t.Parallel()
	const (
		entries = 300
		lists   = 4
	)
	dir := t.TempDir()
	cfg := serverConfig{Dir: dir, YAML: publicYAML,
		Args: []string{"--database", "sqlite:" + filepath.Join(dir, "graceful.db")}}
	s := startServer(t, cfg)
	client := newClient()
	who := newUUID()
	big := `"` + strings.Repeat("x", 16<<10) + `"` // 300 of them: about 5 MB a list
	for i, r := range parallel(entries, 8, func(i int) (reply, error) {
		return send(client, http.MethodPost, s.URL+"/cache/user", body(fmt.Sprintf("k%d", i), "t", who, big, `null`))
	}) {
		if r.err != nil || r.Status != http.StatusCreated {
			t.Fatalf("seeding POST %d: %v %d %s", i, r.err, r.Status, short(r.Body))
		}
	}

	// A POST with half its body sent.
	full := body("slow", "t", who, `"late"`, `null`)
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/cache/user", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	posted := make(chan outcome, 1)
	go func() {
		var o outcome
		resp, err := client.Do(req)
		if err == nil {
			o.Status = resp.StatusCode
			o.Body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		o.err = err
		posted <- o
	}()
	if _, err := pw.Write(full[:len(full)/2]); err != nil {
		t.Fatal(err)
	}

	// Large lists whose answers have begun but are left unread.
	var open []*http.Response
	for range lists {
		resp, err := client.Get(s.URL + "/cache/user?limit=1000&assignee.id=" + who)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp)
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitLog(t, "shutting down")

	if _, err := pw.Write(full[len(full)/2:]); err != nil {
		t.Errorf("sending the rest of the POST body after SIGTERM: %v", err)
	}
	pw.Close()
	// A list reads its entries page by page, each page a statement of its
	// own (README, "Fair share of the database"): the entry the slow POST
	// creates meanwhile may come at its end. Every seeded entry must be
	// there, once.
	for i, resp := range open {
		var list []entry
		err := json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		seeded := map[string]bool{}
		for _, e := range list {
			if e.Key != "slow" {
				seeded[e.Key] = true
			}
		}
		if extra := len(list) - entries; resp.StatusCode != http.StatusOK || err != nil || len(seeded) != entries ||
			extra < 0 || extra > 1 || (extra == 1 && list[len(list)-1].Key != "slow") {
			t.Errorf("list %d in flight at SIGTERM: status %d, %d entries (%d seeded ones), %v; want 200 and all %d, plus at most the slow POST's at the end",
				i, resp.StatusCode, len(list), len(seeded), err, entries)
		}
	}
	o := <-posted
	if o.err != nil || o.Status != http.StatusCreated {
		t.Fatalf("POST in flight at SIGTERM: %v, status %d %s; want 201", o.err, o.Status, short(o.Body))
	}
	if code := s.wait(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0", code)
	}
	// The log shows the POST finished after shutdown began, so it
	// really was in flight.
	log := s.log.String()
	down, lastPost := strings.Index(log, `msg="shutting down"`), strings.LastIndex(log, "msg=request method=POST")
	if down < 0 || lastPost < down {
		t.Error("the log does not show the POST finishing after shutdown began")
	}
	if !strings.Contains(log[max(down, 0):], "msg=stopped") {
		t.Error("no \"stopped\" line after shutdown began: the server did not stop in order")
	}

	id := o.entry(t).ID
	s = startServer(t, cfg)
	mustSend(t, client, http.MethodGet, s.URL+"/cache/user/"+id, nil).want(t, http.StatusOK)
}
