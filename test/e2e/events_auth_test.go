package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/contract"
)

// streamEndBound is how long a test waits for an ended session's stream
// to receive its end. The service ends it within a second of the replica
// learning of the change (README.md, "Change feed"); the bound is
// generous against a loaded machine, and far below the 60 s heartbeat
// these servers run with, so a stream that only re-checks at heartbeats
// fails it.
const streamEndBound = 10 * time.Second

// streamHeartbeat is the heartbeat of the servers below: long, so that no
// stream ends because a heartbeat came.
const streamHeartbeat = "60s"

// wantStreamEnd fails t unless st receives `event: end` naming reason,
// then closes, within streamEndBound of since. It returns how long after
// since the end arrived.
func wantStreamEnd(t *testing.T, st *sseStream, since time.Time, reason string) time.Duration {
	t.Helper()
	ev := st.next(t)
	took := time.Since(since)
	if ev.Event != "end" || !strings.Contains(ev.Data, reason) {
		t.Fatalf("got %s %s, want end (%s)", ev.Event, ev.Data, reason)
	}
	if took > streamEndBound {
		t.Fatalf("the stream ended %v after its session, want within %v", took, streamEndBound)
	}
	st.waitClosed(t)
	return took
}

// Issue 23: a stream never outlives its session. Two replicas share one
// database; a stream open on B ends (`event: end`, then close) soon after
// its session ends through A or the CLI: logout, refresh-token reuse,
// `users set-password`, `users disable`, and after `keys revoke` of its
// token's key as soon as B refuses that key. Another user's stream on B
// lives on (until its own key is revoked).
func TestStreamsEndWithTheirSessionOnEveryReplica(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100, ReuseGrace: -1} // reuse revokes at once
			a := &authBinary{dir: t.TempDir(), client: newClient()}
			a.dbURL, a.driver, a.dsn = db.open(t, a.dir)
			args := append(authArgs(a.dbURL, cfg), "--events-heartbeat", streamHeartbeat)
			a.srv = startServer(t, serverConfig{Dir: a.dir, Args: args})
			b := startServer(t, serverConfig{Dir: a.dir, Args: args})
			const password = "stream-password-1"
			a.addUser(t, "alma", password, true)
			bertID := a.addUser(t, "bert", password, true)
			events := b.URL + "/cache/user/events"
			open := func(p pair) *sseStream {
				t.Helper()
				st := openStream(t, events, "Authorization", "Bearer "+p.Access)
				if st.Status != http.StatusOK {
					t.Fatalf("stream status %d", st.Status)
				}
				return st
			}
			bert := loginAt(t, a.client, a.srv.URL, "bert", password)
			bystander := open(bert)
			// bystanderLives posts one of bert's entries on A and wants it
			// on bert's stream on B: the stream is still open.
			bystanderLives := func(t *testing.T, key string) {
				t.Helper()
				e := mustSend(t, a.client, http.MethodPost, a.srv.URL+"/cache/user", body(key, "t", bertID, `"v"`, "null"),
					"Authorization", "Bearer "+bert.Access).want(t, http.StatusCreated).entry(t)
				if ev := bystander.next(t); ev.Event != "created" || ev.entry(t).ID != e.ID {
					t.Fatalf("bert's stream got %s %s, want his new entry %s", ev.Event, ev.Data, e.ID)
				}
			}

			t.Run("logout through A", func(t *testing.T) {
				p := loginAt(t, a.client, a.srv.URL, "alma", password)
				other := loginAt(t, a.client, b.URL, "alma", password)
				st, staying := open(p), open(other)
				mustSend(t, a.client, http.MethodPost, a.srv.URL+"/auth/logout", nil, "Authorization", "Bearer "+p.Access).
					want(t, http.StatusNoContent)
				t.Logf("ended %v after the logout", wantStreamEnd(t, st, time.Now(), "session ended"))
				// The user's other session keeps its stream.
				staying.quiet(t, 300*time.Millisecond)
				bystanderLives(t, "after-logout")
			})

			t.Run("refresh-token reuse through A", func(t *testing.T) {
				p := loginAt(t, a.client, a.srv.URL, "alma", password)
				st := open(p)
				refreshAt(t, a.client, a.srv.URL, p.Refresh, http.StatusCreated)
				refreshAt(t, a.client, a.srv.URL, p.Refresh, http.StatusUnauthorized)
				t.Logf("ended %v after the reuse", wantStreamEnd(t, st, time.Now(), "session ended"))
				bystanderLives(t, "after-reuse")
			})

			t.Run("users set-password", func(t *testing.T) {
				p := loginAt(t, a.client, a.srv.URL, "alma", password)
				st := open(p)
				a.setPassword(t, "alma", password+"-new")
				t.Logf("ended %v after the command", wantStreamEnd(t, st, time.Now(), "session ended"))
				bystanderLives(t, "after-set-password")
			})

			t.Run("users disable", func(t *testing.T) {
				p := loginAt(t, a.client, a.srv.URL, "alma", password+"-new")
				st := open(p)
				a.disableUser(t, "alma")
				t.Logf("ended %v after the command", wantStreamEnd(t, st, time.Now(), "session ended"))
				bystanderLives(t, "after-disable")
			})

			t.Run("keys revoke, as soon as B refuses the key", func(t *testing.T) {
				kid := a.signingKey(t).ID
				if r := a.cli(t, "", "keys", "revoke", "--", kid); r.Code != 0 {
					t.Fatalf("keys revoke: status %d, stderr %q", r.Code, r.Stderr)
				}
				revoked := time.Now()
				// B learns at its next key reload (README.md, "Commands");
				// the stream must end within a second of B refusing the key.
				for probeAt(t, a.client, b.URL, bert.Access) != http.StatusUnauthorized {
					if time.Since(revoked) > keyRevocationBound {
						t.Fatalf("B accepts a token of a key revoked %v ago", keyRevocationBound)
					}
					time.Sleep(200 * time.Millisecond)
				}
				refused := time.Now()
				t.Logf("B refused the key %v after the command", refused.Sub(revoked))
				t.Logf("the stream ended at most %v after B refused the key", wantStreamEnd(t, bystander, refused, "session ended"))
			})
		})
	}
}

// Issue 23: a session reaching --session-max ends its stream: no token of
// the session expires later (README.md, configuration), and a stream ends
// at its token's expiry.
func TestStreamsEndAtTheSessionMaximum(t *testing.T) {
	t.Parallel()
	cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100}
	b := &authBinary{dir: t.TempDir(), client: newClient()}
	b.dbURL, b.driver, b.dsn = authDatabases[0].open(t, b.dir)
	b.srv = startServer(t, serverConfig{Dir: b.dir,
		Args: append(authArgs(b.dbURL, cfg), "--session-max", "3s", "--events-heartbeat", streamHeartbeat)})
	const password = "session-max-password"
	b.addUser(t, "max", password, true)
	p := loginAt(t, b.client, b.srv.URL, "max", password)
	end := time.Unix(tokenExp(t, p.Access), 0)
	st := openStream(t, b.srv.URL+"/cache/user/events", "Authorization", "Bearer "+p.Access)
	if st.Status != http.StatusOK {
		t.Fatalf("stream status %d", st.Status)
	}
	ev := st.next(t)
	if ev.Event != "end" || !strings.Contains(ev.Data, "token expired") {
		t.Fatalf("got %s %s, want end (token expired)", ev.Event, ev.Data)
	}
	if late := time.Since(end); late > streamEndBound {
		t.Fatalf("the stream ended %v after the session's maximum, want within %v", late, streamEndBound)
	}
	st.waitClosed(t)
}
