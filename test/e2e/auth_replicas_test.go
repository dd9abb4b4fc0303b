package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/test/contract"
)

// Issue 5: 20 concurrent refreshes with one token, spread over two
// replicas sharing one database (a SQLite file, or PostgreSQL), with the
// reuse grace off: exactly one wins, the others are 401, never a 5xx; the
// reuse the losers represent revokes the family on both replicas; and
// neither replica logs an error.
func TestConcurrentRefreshesAcrossReplicas(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100, ReuseGrace: -1}
			a := newAuthBinary(t, db, cfg)
			b := startServer(t, serverConfig{Dir: a.dir, Args: authArgs(a.dbURL, cfg)})
			replicas := []*server{a.srv, b}
			const password = "replica-password-1"
			a.addUser(t, "rhea", password, true)

			for round := range 3 {
				p := loginAt(t, a.client, replicas[round%2].URL, "rhea", password)
				body := []byte(`{"refreshToken":"` + p.Refresh + `"}`)
				const n = 20
				outcomes := race(n, func(i int) (reply, error) {
					return send(a.client, http.MethodPost, replicas[i%2].URL+"/auth/refresh", body)
				})
				var won []pair
				for i, o := range outcomes {
					switch {
					case o.err != nil:
						t.Errorf("round %d request %d: %v", round, i, o.err)
					case o.Status == http.StatusCreated:
						var q pair
						if err := json.Unmarshal(o.Body, &q); err != nil || q.Refresh == "" {
							t.Errorf("round %d request %d: 201 without a pair", round, i)
						}
						won = append(won, q)
					case o.Status != http.StatusUnauthorized:
						t.Errorf("round %d request %d answered %d, want 201 or 401", round, i, o.Status)
					}
				}
				if len(won) != 1 {
					t.Fatalf("round %d: %d of %d concurrent refreshes with one token succeeded, want exactly 1", round, len(won), n)
				}
				// The losers presented a used token: the family is revoked,
				// so the winner's successor is refused on either replica.
				for _, s := range replicas {
					r := mustSend(t, a.client, http.MethodPost, s.URL+"/auth/refresh",
						[]byte(`{"refreshToken":"`+won[0].Refresh+`"}`))
					if r.Status != http.StatusUnauthorized {
						t.Errorf("round %d: the winner's successor answered %d at %s after the reuse, want 401", round, r.Status, s.URL)
					}
				}
			}
			for i, s := range replicas {
				for _, line := range s.log.lines("level=ERROR") {
					t.Errorf("replica %d logged: %s", i, line)
				}
			}
		})
	}
}

// Issue 10: the same race with the default reuse grace (10 s): every one
// of the 20 answers is 201 and names the same refresh token, on either
// replica; that token then rotates once, on either replica, and the
// family never had a second live token; no replica logs an error.
func TestConcurrentRefreshesWithinGraceAcrossReplicas(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100}
			a := newAuthBinary(t, db, cfg)
			b := startServer(t, serverConfig{Dir: a.dir, Args: authArgs(a.dbURL, cfg)})
			replicas := []*server{a.srv, b}
			const password = "replica-password-1"
			a.addUser(t, "rhea", password, true)

			for round := range 3 {
				p := loginAt(t, a.client, replicas[round%2].URL, "rhea", password)
				body := []byte(`{"refreshToken":"` + p.Refresh + `"}`)
				const n = 20
				outcomes := race(n, func(i int) (reply, error) {
					path := []string{"/auth/refresh", "/token/refresh"}[i%4/2]
					return send(a.client, http.MethodPost, replicas[i%2].URL+path, body)
				})
				jtis := map[string]bool{}
				var live pair
				for i, o := range outcomes {
					if o.err != nil || o.Status != http.StatusCreated {
						t.Errorf("round %d request %d answered %d (%v), want 201", round, i, o.Status, o.err)
						continue
					}
					var q pair
					if err := json.Unmarshal(o.Body, &q); err != nil || q.Refresh == "" {
						t.Errorf("round %d request %d: 201 without a pair", round, i)
						continue
					}
					jtis[tokenID(t, q.Refresh)] = true
					live = q
				}
				if len(jtis) != 1 {
					t.Fatalf("round %d: the concurrent refreshes handed out %d distinct refresh tokens, want 1", round, len(jtis))
				}
				r := mustSend(t, a.client, http.MethodPost, replicas[(round+1)%2].URL+"/token/refresh",
					[]byte(`{"refreshToken":"`+live.Refresh+`"}`))
				if r.Status != http.StatusCreated {
					t.Errorf("round %d: the one live refresh token answered %d, want 201", round, r.Status)
				}
			}
			for i, s := range replicas {
				for _, line := range s.log.lines("level=ERROR") {
					t.Errorf("replica %d logged: %s", i, line)
				}
			}
		})
	}
}

// tokenID returns the jti of a JWT, read without checking the signature.
func tokenID(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatal("not a compact JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		ID string `json:"jti"`
	}
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" {
		t.Fatal("a JWT without a readable jti")
	}
	return c.ID
}
