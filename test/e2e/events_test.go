package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 12: the change feed over the binary, on SQLite (docs/api.md,
// "Change feed"). Public assignments: the policy tests log in.
func TestEventsOnTheBinary(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverConfig{YAML: publicYAML, Args: []string{
		"--database", "sqlite:" + t.TempDir() + "/events.db",
		"--events-heartbeat", "300ms", "--sweep-interval", "200ms"}})
	client := newClient()
	events := s.URL + "/cache/user/events"
	create := func(t *testing.T, key, typ, assignee, expiresIn string) entry {
		t.Helper()
		exp := "null"
		if expiresIn != "" {
			exp = strconv.Quote(expiresIn)
		}
		return mustSend(t, client, http.MethodPost, s.URL+"/cache/user", body(key, typ, assignee, `"v"`, exp)).
			want(t, http.StatusCreated).entry(t)
	}

	t.Run("every write path sends its event, in revision order, with the entry as GET answers it", func(t *testing.T) {
		t.Parallel()
		assignee := newUUID()
		st := openStream(t, events+"?assignee.id="+assignee)
		if st.Status != http.StatusOK || st.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, Content-Type %q", st.Status, st.Header.Get("Content-Type"))
		}
		e := create(t, "k1", "t", assignee, "")
		got := mustSend(t, client, http.MethodGet, s.URL+"/cache/user/"+e.ID, nil).want(t, 200)
		ev := st.next(t)
		if ev.Event != "created" || ev.entry(t).ID != e.ID {
			t.Fatalf("first event %s %s, want created %s", ev.Event, ev.Data, e.ID)
		}
		if diff, err := sameFields([]byte(ev.Data), got.Body); err != nil || len(diff) > 0 {
			t.Fatalf("created data differs from GET in %v (%v):\n%s\n%s", diff, err, ev.Data, got.Body)
		}
		last := ev.rev(t)
		want := func(kind, id string) sseEvent {
			t.Helper()
			ev := st.next(t)
			if ev.Event != kind || ev.entry(t).ID != id {
				t.Fatalf("event %s %s, want %s of %s", ev.Event, ev.Data, kind, id)
			}
			if r := ev.rev(t); r <= last {
				t.Fatalf("revision %d after %d", r, last)
			}
			last = ev.rev(t)
			return ev
		}
		mustSend(t, client, http.MethodPatch, s.URL+"/cache/user/"+e.ID, []byte(`{"data":"patched"}`)).want(t, 200)
		if en := want("updated", e.ID).entry(t); string(en.Data) != `"patched"` || en.Version != 2 {
			t.Fatalf("updated event carries data %s version %d", en.Data, en.Version)
		}
		mustSend(t, client, http.MethodPut, s.URL+"/cache/user/"+e.ID, body("k1", "t", assignee, `"put"`, "null")).want(t, 200)
		want("updated", e.ID)
		id := newUUIDv7ish()
		mustSend(t, client, http.MethodPut, s.URL+"/cache/user/"+id, body("k2", "t", assignee, `"upsert"`, "null")).want(t, 201)
		want("created", id)
		mustSend(t, client, http.MethodDelete, s.URL+"/cache/user/"+e.ID, nil).want(t, 200)
		if en := want("deleted", e.ID).entry(t); en.DateDeleted == nil {
			t.Fatal("deleted event without dateDeleted")
		}
		st.quiet(t, 300*time.Millisecond)
	})

	t.Run("filters keep only the matching entries' events", func(t *testing.T) {
		t.Parallel()
		assignee := newUUID()
		byKey := openStream(t, events+"?assignee.id="+assignee+"&key=wanted")
		byType := openStream(t, events+"?assignee.id="+assignee+"&type=wanted")
		create(t, "other", "other", assignee, "")
		create(t, "other", "wanted", assignee, "")
		create(t, "wanted", "other", assignee, "")
		if ev := byKey.next(t); ev.entry(t).Key != "wanted" {
			t.Fatalf("key filter passed %s", ev.Data)
		}
		if ev := byType.next(t); ev.entry(t).Type != "wanted" {
			t.Fatalf("type filter passed %s", ev.Data)
		}
		byKey.quiet(t, 300*time.Millisecond)
		byType.quiet(t, 0)
	})

	t.Run("Last-Event-ID and since replay what followed, then go on live, with no gap and no duplicate", func(t *testing.T) {
		t.Parallel()
		assignee := newUUID()
		st := openStream(t, events+"?assignee.id="+assignee)
		var ids []string
		for i := range 4 {
			ids = append(ids, create(t, fmt.Sprint("r", i), "t", assignee, "").ID)
		}
		var revs []int64
		for range ids {
			revs = append(revs, st.next(t).rev(t))
		}
		resumers := map[string]*sseStream{
			"Last-Event-ID": openStream(t, events+"?assignee.id="+assignee, "Last-Event-ID", strconv.FormatInt(revs[0], 10)),
			"since":         openStream(t, events+"?assignee.id="+assignee+"&since="+strconv.FormatInt(revs[0], 10)),
			"Last-Event-ID over since": openStream(t, events+"?assignee.id="+assignee+"&since=0",
				"Last-Event-ID", strconv.FormatInt(revs[0], 10)),
		}
		for name, r := range resumers {
			for i := 1; i < len(ids); i++ {
				ev := r.next(t)
				if ev.rev(t) != revs[i] || ev.entry(t).ID != ids[i] {
					t.Fatalf("%s: replayed %s %s, want rev %d of %s", name, ev.ID, ev.Data, revs[i], ids[i])
				}
			}
		}
		live := create(t, "live", "t", assignee, "")
		for name, r := range resumers {
			if ev := r.next(t); ev.entry(t).ID != live.ID {
				t.Fatalf("%s: after the replay got %s, want the live %s", name, ev.Data, live.ID)
			}
			r.quiet(t, 100*time.Millisecond)
		}
	})

	t.Run("without a revision the stream starts with the next change; a heartbeat comes when idle", func(t *testing.T) {
		t.Parallel()
		assignee := newUUID()
		create(t, "before", "t", assignee, "")
		st := openStream(t, events+"?assignee.id="+assignee)
		if c := st.nextComment(t, "stream open"); c != "heartbeat" {
			t.Fatalf("comment %q, want heartbeat", c)
		}
		after := create(t, "after", "t", assignee, "")
		if ev := st.next(t); ev.entry(t).ID != after.ID {
			t.Fatalf("first event %s, want the entry created after subscribing", ev.Data)
		}
	})

	t.Run("the sweeper's reclaiming of an expired entry sends expired with dateDeleted set", func(t *testing.T) {
		t.Parallel()
		assignee := newUUID()
		st := openStream(t, events+"?assignee.id="+assignee)
		e := create(t, "short", "t", assignee, "300ms")
		if ev := st.next(t); ev.Event != "created" {
			t.Fatalf("event %s, want created", ev.Event)
		}
		ev := st.next(t)
		en := ev.entry(t)
		if ev.Event != "expired" || en.ID != e.ID || en.DateDeleted == nil || en.ExpirationDate == nil || *en.DateDeleted != *en.ExpirationDate {
			t.Fatalf("event %s %s, want expired of %s with dateDeleted = expirationDate", ev.Event, ev.Data, e.ID)
		}
	})

	t.Run("a bad revision or an unknown parameter is a 400 JSON error; an unknown assignment 404", func(t *testing.T) {
		t.Parallel()
		for _, q := range []string{"?since=-1", "?since=abc", "?since=99999999999999999999", "?keyy=x", "?since=1&since=2"} {
			r := mustSend(t, client, http.MethodGet, events+q, nil)
			if r.Status != 400 || r.errorCode() == "" {
				t.Errorf("GET events%s: %d %s, want a 400 JSON error", q, r.Status, short(r.Body))
			}
		}
		if r := mustSend(t, client, http.MethodGet, events, nil, "Last-Event-ID", "x1"); r.Status != 400 {
			t.Errorf("Last-Event-ID x1: %d, want 400", r.Status)
		}
		if r := mustSend(t, client, http.MethodGet, s.URL+"/cache/nope/events", nil); r.Status != 404 {
			t.Errorf("unknown assignment: %d, want 404", r.Status)
		}
	})

	t.Run("clear sends deleted for every entry", func(t *testing.T) {
		t.Parallel()
		assignee := newUUID()
		st := openStream(t, events+"?assignee.id="+assignee)
		a, b := create(t, "c1", "t", assignee, ""), create(t, "c2", "t", assignee, "")
		st.next(t)
		st.next(t)
		// The Go API's clear runs DeleteByAssignee; over HTTP each DELETE
		// is one entry. Both record one deleted each.
		for _, id := range []string{a.ID, b.ID} {
			mustSend(t, client, http.MethodDelete, s.URL+"/cache/user/"+id, nil).want(t, 200)
		}
		seen := map[string]bool{}
		for range 2 {
			ev := st.next(t)
			if ev.Event != "deleted" {
				t.Fatalf("event %s, want deleted", ev.Event)
			}
			seen[ev.entry(t).ID] = true
		}
		if !seen[a.ID] || !seen[b.ID] {
			t.Fatalf("deleted %v, want %s and %s", seen, a.ID, b.ID)
		}
	})
}

// newUUIDv7ish returns a random UUID for a PUT that creates.
func newUUIDv7ish() string { return newUUID() }

// A subscriber that never reads is disconnected; writers and other
// subscribers go on meanwhile.
func TestEventsSubscriberThatNeverReadsIsDisconnected(t *testing.T) {
	t.Parallel()
	// 400 entries of 200 KiB for one assignee: 80 MiB, past the default
	// quota of 64 MiB.
	s := startServer(t, serverConfig{YAML: publicYAML, Args: []string{
		"--database", "sqlite:" + t.TempDir() + "/events.db", "--quota-max-bytes", "0"}})
	client := newClient()
	u := strings.TrimPrefix(s.URL, "http://")
	conn, err := net.Dial("tcp", u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /cache/user/events HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	reader := openStream(t, s.URL+"/cache/user/events")
	big := `"` + strings.Repeat("x", 200<<10) + `"`
	assignee := newUUID()
	const n = 400
	for i := range n {
		mustSend(t, client, http.MethodPost, s.URL+"/cache/user", body(fmt.Sprint("big", i), "t", assignee, big, "null")).
			want(t, http.StatusCreated)
	}
	for i := range n {
		if ev := reader.next(t); ev.Event != "created" {
			t.Fatalf("reading subscriber: event %d is %s", i, ev.Event)
		}
	}
	// The stalled subscriber was dropped: its request ended (the access
	// log has it), though the client never read. The reading subscriber's
	// stream is still open, so that line is the stalled one's.
	s.waitLog(t, "route=/cache/:assignment/events", "status=200")
	if got := len(s.log.lines("route=/cache/:assignment/events")); got != 1 {
		t.Fatalf("%d event streams ended, want the stalled one alone", got)
	}
	after := mustSend(t, client, http.MethodPost, s.URL+"/cache/user", body("after", "t", assignee, `"v"`, "null")).
		want(t, http.StatusCreated).entry(t)
	if ev := reader.next(t); ev.entry(t).ID != after.ID {
		t.Fatalf("the reading subscriber got %s, want %s", ev.Data, after.ID)
	}
}

// The feed under the owner policy, with tokens: a caller sees only its own
// entries' events; a browser's access_token works on this route alone; the
// stream ends when the token expires and on shutdown.
func TestEventsOwnerPolicyTokensAndShutdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + dir + "/owner.db"
	const password = "correct horse battery"
	ids := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", name, "--password-stdin", "--database", db)
		if r.Code != 0 {
			t.Fatalf("users add %s: exit %d: %s", name, r.Code, r.Stderr)
		}
		ids[name] = strings.TrimSpace(r.Stdout)
	}
	s := startServer(t, serverConfig{Dir: dir, Args: []string{"--database", db, "--access-token-ttl", "6s",
		"--events-heartbeat", "200ms"}})
	client := newClient()
	alice := loginAt(t, client, s.URL, "alice", password)
	bob := loginAt(t, client, s.URL, "bob", password)
	events := s.URL + "/cache/user/events"
	post := func(t *testing.T, p pair, owner, key string) entry {
		t.Helper()
		return mustSend(t, client, http.MethodPost, s.URL+"/cache/user", body(key, "t", ids[owner], `"v"`, "null"),
			"Authorization", "Bearer "+p.Access).want(t, http.StatusCreated).entry(t)
	}

	if r := mustSend(t, client, http.MethodGet, events, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", r.Status)
	}
	if r := mustSend(t, client, http.MethodGet, s.URL+"/cache/user?access_token="+alice.Access, nil); r.Status != http.StatusUnauthorized &&
		r.Status != http.StatusBadRequest {
		t.Fatalf("access_token on the list route: %d, want it refused", r.Status)
	}
	byHeader := openStream(t, events, "Authorization", "Bearer "+alice.Access)
	byQuery := openStream(t, events+"?access_token="+alice.Access)
	// Asking for bob's entries as alice matches nothing.
	othersOnly := openStream(t, events+"?assignee.id="+ids["bob"], "Authorization", "Bearer "+alice.Access)
	for _, st := range []*sseStream{byHeader, byQuery, othersOnly} {
		if st.Status != http.StatusOK {
			t.Fatalf("stream status %d", st.Status)
		}
	}
	post(t, bob, "bob", "bobs")
	mine := post(t, alice, "alice", "alices")
	for name, st := range map[string]*sseStream{"header": byHeader, "access_token": byQuery} {
		if ev := st.next(t); ev.entry(t).ID != mine.ID {
			t.Fatalf("%s: alice got %s, want only her own %s", name, ev.Data, mine.ID)
		}
	}
	othersOnly.quiet(t, 300*time.Millisecond)
	if lines := s.log.lines(alice.Access); len(lines) > 0 {
		t.Fatalf("the access token appears in the log: %d lines", len(lines))
	}

	// The token expires 6 s after login: the stream ends with end.
	ev := byHeader.next(t)
	if ev.Event != "end" || !strings.Contains(ev.Data, "token expired") {
		t.Fatalf("after expiry: %s %s, want end (token expired)", ev.Event, ev.Data)
	}
	byHeader.waitClosed(t)

	// Logging out ends the session's streams, not the other sessions'.
	session := loginAt(t, client, s.URL, "alice", password)
	other := loginAt(t, client, s.URL, "alice", password)
	ending := openStream(t, events, "Authorization", "Bearer "+session.Access)
	staying := openStream(t, events, "Authorization", "Bearer "+other.Access)
	ending.nextComment(t, "stream open")
	staying.nextComment(t, "stream open")
	mustSend(t, client, http.MethodPost, s.URL+"/auth/logout", nil, "Authorization", "Bearer "+session.Access).
		want(t, http.StatusNoContent)
	if ev := ending.next(t); ev.Event != "end" || !strings.Contains(ev.Data, "session ended") {
		t.Fatalf("after logout: %s %s, want end (session ended)", ev.Event, ev.Data)
	}
	ending.waitClosed(t)
	still := post(t, other, "alice", "still")
	if ev := staying.next(t); ev.entry(t).ID != still.ID {
		t.Fatalf("the other session's stream got %s %s, want %s", ev.Event, ev.Data, still.ID)
	}

	// Shutdown ends open streams with end, and the server exits in time.
	fresh := loginAt(t, client, s.URL, "bob", password)
	open := openStream(t, events, "Authorization", "Bearer "+fresh.Access)
	open.nextComment(t, "stream open")
	start := time.Now()
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit status %d after SIGTERM", code)
	}
	if ev := open.next(t); ev.Event != "end" || !strings.Contains(ev.Data, "shutdown") {
		t.Fatalf("on shutdown: %s %s, want end (shutdown)", ev.Event, ev.Data)
	}
	t.Logf("stopped %s after SIGTERM with a stream open", time.Since(start))
}

// Changes older than --events-retention are pruned: resuming from before
// them starts with reset, then the stream goes on live.
func TestEventsResetAfterRetention(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverConfig{YAML: publicYAML, Args: []string{
		"--database", "sqlite:" + t.TempDir() + "/events.db", "--events-retention", "1s"}})
	client := newClient()
	assignee := newUUID()
	mustSend(t, client, http.MethodPost, s.URL+"/cache/user", body("old", "t", assignee, `"v"`, "null")).want(t, http.StatusCreated)
	deadline := time.Now().Add(eventBound)
	for {
		st := openStream(t, s.URL+"/cache/user/events?since=0&assignee.id="+assignee)
		ev := st.next(t)
		if ev.Event == "reset" {
			var reset struct{ Oldest int64 }
			if err := json.Unmarshal([]byte(ev.Data), &reset); err != nil || reset.Oldest < 2 {
				t.Fatalf("reset data %s (%v), want the oldest retained revision above 1", ev.Data, err)
			}
			live := mustSend(t, client, http.MethodPost, s.URL+"/cache/user", body("new", "t", assignee, `"v"`, "null")).
				want(t, http.StatusCreated).entry(t)
			if ev := st.next(t); ev.Event != "created" || ev.entry(t).ID != live.ID {
				t.Fatalf("after the reset: %s %s, want the live create", ev.Event, ev.Data)
			}
			return
		}
		if ev.Event != "created" || time.Now().After(deadline) {
			t.Fatalf("since=0 gave %s %s; no reset within %s of a 1 s retention", ev.Event, ev.Data, eventBound)
		}
		st.cancel()
		time.Sleep(200 * time.Millisecond)
	}
}
