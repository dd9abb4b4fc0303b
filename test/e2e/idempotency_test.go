package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/pgtest"
)

// Issue 26: a POST retried with its Idempotency-Key answers the first
// answer on any replica, writes nothing again, and refuses the key with
// another body; keys are per user and per assignment (README, "Idempotent
// retries"). Two replicas share one database, SQLite file or PostgreSQL.
func TestIdempotentRetriesAcrossTwoReplicas(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, db string }{{"SQLite", ""}, {"PostgreSQL", pgtest.New(t)}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			site := newArchiveSite(t, c.db)
			alice := site.cliAddUser(t, "alice", "correct horse")
			bob := site.cliAddUser(t, "bob", "battery staple")
			a, b := site.serve(t), site.serve(t)
			client := newClient()
			asAlice := []string{"Authorization", "Bearer " + loginAt(t, client, a.URL, "alice", "correct horse").Access}
			asBob := []string{"Authorization", "Bearer " + loginAt(t, client, b.URL, "bob", "battery staple").Access}
			with := func(auth []string, key string) []string { return append([]string{"Idempotency-Key", key}, auth...) }

			key := `"` + newUUID() + `"`
			sent := body("k", "t", alice, `{"v": 1}`, `null`)
			first := mustSend(t, client, http.MethodPost, a.URL+"/cache/user", sent, with(asAlice, key)...).want(t, http.StatusCreated)
			again := mustSend(t, client, http.MethodPost, b.URL+"/cache/user", sent, with(asAlice, key)...).want(t, http.StatusCreated)
			if !bytes.Equal(again.Body, first.Body) {
				t.Errorf("the retry through the other replica answered %s, want %s", again.Body, first.Body)
			}
			for _, h := range []string{"ETag", "Location"} {
				if again.Header.Get(h) != first.Header.Get(h) {
					t.Errorf("the retry's %s is %q, want %q", h, again.Header.Get(h), first.Header.Get(h))
				}
			}
			mustSend(t, client, http.MethodPost, b.URL+"/cache/user", body("k", "t", alice, `{"v": 2}`, `null`), with(asAlice, key)...).
				want(t, http.StatusUnprocessableEntity)
			// Another user's key, and another assignment, are other scopes.
			mustSend(t, client, http.MethodPost, a.URL+"/cache/user", body("k", "t", bob, `{"v": 1}`, `null`), with(asBob, key)...).
				want(t, http.StatusCreated)
			mustSend(t, client, http.MethodPost, b.URL+"/cache/org", sent, with(asAlice, key)...).want(t, http.StatusCreated)
			var listed []json.RawMessage
			list := mustSend(t, client, http.MethodGet, b.URL+"/cache/user?assignee.id="+alice, nil, asAlice...).want(t, http.StatusOK)
			if err := json.Unmarshal(list.Body, &listed); err != nil || len(listed) != 1 {
				t.Errorf("alice holds %d entries in user (%v), want 1: %s", len(listed), err, list.Body)
			}

			// A create whose answer the client never read (it hangs up once
			// the entry is there) committed all the same: the retry answers
			// that entry, not 409.
			lostKey := newUUID()
			lostBody := body("lost", "t", alice, `"x"`, `null`)
			hangUp := postUnread(t, a.URL+"/cache/user", lostBody, with(asAlice, lostKey)...)
			deadline := time.Now().Add(10 * time.Second)
			for {
				got := mustSend(t, client, http.MethodGet, a.URL+"/cache/user?key=lost&assignee.id="+alice, nil, asAlice...).want(t, http.StatusOK)
				if strings.Contains(string(got.Body), `"key":"lost"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the create whose answer was lost never committed")
				}
				time.Sleep(50 * time.Millisecond)
			}
			hangUp()
			retry := mustSend(t, client, http.MethodPost, b.URL+"/cache/user", lostBody, with(asAlice, lostKey)...).want(t, http.StatusCreated)
			got := mustSend(t, client, http.MethodGet, b.URL+retry.Header.Get("Location"), nil, asAlice...).want(t, http.StatusOK)
			if !bytes.Equal(got.Body, retry.Body) {
				t.Errorf("the retry answered %s, but the stored entry is %s", retry.Body, got.Body)
			}
		})
	}
}

// postUnread sends a POST over a connection of its own and never reads
// the answer; the returned function closes the connection.
func postUnread(t *testing.T, target string, body []byte, hdr ...string) func() {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", u.Path, u.Host, len(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&req, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := conn.Write([]byte(req.String())); err != nil {
		t.Fatal(err)
	}
	return func() { _ = conn.Close() }
}
