package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/contract"
)

// sessionEndBound is how soon an ended session's access tokens must be
// refused on every replica: docs/api.md ("Authentication") allows one second, the
// test's own requests get half a second more.
const sessionEndBound = 1500 * time.Millisecond

// Issue 11: logout, refresh-token reuse, `users set-password` and `users
// disable` end the affected sessions' access tokens within a second on
// both replicas sharing one database, while other sessions live on.
func TestSessionsEndOnEveryReplica(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100, ReuseGrace: -1} // reuse revokes at once
			a := newAuthBinary(t, db, cfg)
			b := startServer(t, serverConfig{Dir: a.dir, Args: authArgs(a.dbURL, cfg)})
			replicas := []string{a.srv.URL, b.URL}
			const password = "sessions-password-1"
			a.addUser(t, "alma", password, true)
			a.addUser(t, "bert", password, true)
			bystander := loginAt(t, a.client, b.URL, "bert", password)

			t.Run("logout", func(t *testing.T) {
				p := loginAt(t, a.client, a.srv.URL, "alma", password)
				other := loginAt(t, a.client, b.URL, "alma", password)
				wantAcceptedEverywhere(t, a.client, replicas, p.Access)
				r := mustSend(t, a.client, http.MethodPost, a.srv.URL+"/auth/logout", nil, "Authorization", "Bearer "+p.Access)
				if r.Status != http.StatusNoContent {
					t.Fatalf("logout answered %d", r.Status)
				}
				wantEndedEverywhere(t, a.client, replicas, time.Now(), p.Access)
				wantAcceptedEverywhere(t, a.client, replicas, other.Access)
			})

			t.Run("refresh-token reuse", func(t *testing.T) {
				p := loginAt(t, a.client, b.URL, "alma", password)
				q := refreshAt(t, a.client, a.srv.URL, p.Refresh, http.StatusCreated)
				refreshAt(t, a.client, b.URL, p.Refresh, http.StatusUnauthorized)
				ended := time.Now()
				wantEndedEverywhere(t, a.client, replicas, ended, p.Access)
				wantEndedEverywhere(t, a.client, replicas, ended, q.Access)
			})

			t.Run("users set-password", func(t *testing.T) {
				p := loginAt(t, a.client, a.srv.URL, "alma", password)
				other := loginAt(t, a.client, b.URL, "alma", password)
				if r := a.cli(t, password+"-new\n", "users", "set-password", "alma", "--password-stdin"); r.Code != 0 {
					t.Fatalf("users set-password: status %d, stderr %q", r.Code, r.Stderr)
				}
				ended := time.Now()
				wantEndedEverywhere(t, a.client, replicas, ended, p.Access)
				wantEndedEverywhere(t, a.client, replicas, ended, other.Access)
			})

			t.Run("users disable", func(t *testing.T) {
				p := loginAt(t, a.client, a.srv.URL, "alma", password+"-new")
				a.disableUser(t, "alma")
				wantEndedEverywhere(t, a.client, replicas, time.Now(), p.Access)
			})

			wantAcceptedEverywhere(t, a.client, replicas, bystander.Access)
		})
	}
}

// Issue 11: however often a family refreshes, it ends at its login plus
// --session-max; refresh tokens' exp is capped at that instant.
func TestSessionMaxOverHTTP(t *testing.T) {
	t.Parallel()
	cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100}
	b := &authBinary{dir: t.TempDir(), client: newClient()}
	b.dbURL, b.driver, b.dsn = authDatabases[0].open(t, b.dir)
	b.srv = startServer(t, serverConfig{Dir: b.dir, Args: append(authArgs(b.dbURL, cfg), "--session-max", "4s")})
	const password = "session-max-password"
	b.addUser(t, "sid", password, true)
	login := time.Now()
	p := loginAt(t, b.client, b.srv.URL, "sid", password)
	end := login.Add(4*time.Second).Unix() + 1 // whole seconds, and the login happened within
	for range 2 {
		time.Sleep(time.Second)
		p = refreshAt(t, b.client, b.srv.URL, p.Refresh, http.StatusCreated)
		for _, tok := range []string{p.Access, p.Refresh} {
			if exp := tokenExp(t, tok); exp > end {
				t.Fatalf("a token of the session expires at %d, after the session's end %d", exp, end)
			}
		}
	}
	time.Sleep(time.Until(time.Unix(end, 0).Add(100 * time.Millisecond)))
	refreshAt(t, b.client, b.srv.URL, p.Refresh, http.StatusUnauthorized)
	// A new login starts a new session.
	loginAt(t, b.client, b.srv.URL, "sid", password)
}

// refreshAt posts the refresh token to base and wants status; on 201 it
// returns the new pair.
func refreshAt(t *testing.T, c *http.Client, base, refresh string, status int) pair {
	t.Helper()
	r := mustSend(t, c, http.MethodPost, base+"/auth/refresh", []byte(`{"refreshToken":"`+refresh+`"}`))
	if r.Status != status {
		t.Fatalf("refresh at %s answered %d, want %d", base, r.Status, status)
	}
	var p pair
	if status == http.StatusCreated {
		if err := json.Unmarshal(r.Body, &p); err != nil || p.Access == "" {
			t.Fatalf("refresh answered 201 without a pair")
		}
	}
	return p
}

// tokenExp returns the exp claim of a JWT, unverified.
func tokenExp(t *testing.T, tok string) int64 {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatal("not a compact JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Exp int64 `json:"exp"`
	}
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatal("unreadable JWT payload")
	}
	return c.Exp
}

// probeAt is the status of an authenticated GET at base.
func probeAt(t *testing.T, c *http.Client, base, access string) int {
	t.Helper()
	return mustSend(t, c, http.MethodGet, base+"/cache/user", nil, "Authorization", "Bearer "+access).Status
}

func wantAcceptedEverywhere(t *testing.T, c *http.Client, bases []string, access string) {
	t.Helper()
	for _, base := range bases {
		if st := probeAt(t, c, base, access); st != http.StatusOK {
			t.Fatalf("GET at %s with a live session's access token answered %d, want 200", base, st)
		}
	}
}

// wantEndedEverywhere fails t unless every base refuses access within
// sessionEndBound of ended.
func wantEndedEverywhere(t *testing.T, c *http.Client, bases []string, ended time.Time, access string) {
	t.Helper()
	for _, base := range bases {
		for {
			st := probeAt(t, c, base, access)
			if st == http.StatusUnauthorized {
				break
			}
			if time.Since(ended) > sessionEndBound {
				t.Fatalf("GET at %s still answers %d %v after the session ended, want 401", base, st, sessionEndBound)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
