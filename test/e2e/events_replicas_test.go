package e2e

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/pgtest"
)

// Issue 12: two replicas on one PostgreSQL database. A change made on one
// reaches the subscribers of both, in one revision order; a subscriber
// resuming on the other replica from any revision gets the rest.
func TestEventsAcrossTwoReplicasOnPostgreSQL(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.New(t)
	cfg := serverConfig{YAML: publicYAML, Args: []string{"--database", dbURL, "--events-heartbeat", "1s"}}
	a, b := launch(t, cfg), launch(t, cfg)
	for _, s := range []*server{a, b} {
		if err := s.waitReady(); err != nil {
			t.Fatalf("start a replica: %v", err)
		}
	}
	client := newClient()
	assignee := newUUID()
	onA := openStream(t, a.URL+"/cache/user/events?assignee.id="+assignee)
	onB := openStream(t, b.URL+"/cache/user/events?assignee.id="+assignee)
	// Writes alternate between the replicas, some concurrently.
	var ids []string
	for i := range 10 {
		s := []*server{a, b}[i%2]
		e := mustSend(t, client, http.MethodPost, s.URL+"/cache/user",
			body("k"+strconv.Itoa(i), "t", assignee, `"v"`, "null")).want(t, http.StatusCreated).entry(t)
		ids = append(ids, e.ID)
	}
	outcomes := parallel(20, 8, func(i int) (reply, error) {
		s := []*server{a, b}[i%2]
		return send(client, http.MethodPost, s.URL+"/cache/user", body("p"+strconv.Itoa(i), "t", assignee, `"v"`, "null"))
	})
	for _, o := range outcomes {
		if o.err != nil || o.reply.Status != http.StatusCreated {
			t.Fatalf("concurrent create: %v %d", o.err, o.reply.Status)
		}
	}
	const total = 30
	read := func(st *sseStream, name string) []sseEvent {
		t.Helper()
		var got []sseEvent
		start := time.Now()
		for len(got) < total {
			got = append(got, st.next(t))
		}
		t.Logf("%s: %d events within %s", name, total, time.Since(start))
		for i := 1; i < len(got); i++ {
			if got[i].rev(t) <= got[i-1].rev(t) {
				t.Fatalf("%s: revision %s after %s", name, got[i].ID, got[i-1].ID)
			}
		}
		return got
	}
	gotA, gotB := read(onA, "replica A"), read(onB, "replica B")
	for i := range gotA {
		if gotA[i].ID != gotB[i].ID || gotA[i].Data != gotB[i].Data {
			t.Fatalf("event %d: A has %s, B has %s", i, gotA[i].ID, gotB[i].ID)
		}
	}
	for i, id := range ids {
		if gotA[i].entry(t).ID != id {
			t.Fatalf("event %d is %s, want the %dth sequential create %s", i, gotA[i].entry(t).ID, i, id)
		}
	}
	onA.quiet(t, 500*time.Millisecond)
	// Resume on B from A's fifth event.
	r := openStream(t, b.URL+"/cache/user/events?assignee.id="+assignee, "Last-Event-ID", gotA[4].ID)
	for i := 5; i < total; i++ {
		if ev := r.next(t); ev.ID != gotA[i].ID {
			t.Fatalf("resumed on B: event %s, want %s", ev.ID, gotA[i].ID)
		}
	}
	r.quiet(t, 300*time.Millisecond)
}
