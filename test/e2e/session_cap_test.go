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

// Issue 30: with --max-sessions-per-user 2 on two replicas sharing one
// database, a third login ends the user's least recently used session
// (a refresh counts as a use) as a logout would: its refresh token is
// refused, its access token and its event stream end on both replicas,
// and the audit trail records session.evicted. The other two live on.
func TestALoginPastTheSessionCapEndsTheLeastRecentlyUsedSession(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			cfg := contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100}
			a := &authBinary{dir: t.TempDir(), client: newClient()}
			a.dbURL, a.driver, a.dsn = db.open(t, a.dir)
			args := append(authArgs(a.dbURL, cfg), "--max-sessions-per-user", "2", "--events-heartbeat", streamHeartbeat)
			a.srv = startServer(t, serverConfig{Dir: a.dir, Args: args})
			b := startServer(t, serverConfig{Dir: a.dir, Args: args})
			replicas := []string{a.srv.URL, b.URL}
			const password = "session-cap-password"
			a.addUser(t, "capped", password, true)

			first := loginAt(t, a.client, a.srv.URL, "capped", password)
			lru := loginAt(t, a.client, b.URL, "capped", password)
			first = refreshAt(t, a.client, a.srv.URL, first.Refresh, http.StatusCreated)
			st := openStream(t, b.URL+"/cache/user/events", "Authorization", "Bearer "+lru.Access)
			if st.Status != http.StatusOK {
				t.Fatalf("stream status %d", st.Status)
			}
			third := loginAt(t, a.client, a.srv.URL, "capped", password)
			ended := time.Now()
			t.Logf("the stream ended %v after the login", wantStreamEnd(t, st, ended, "session ended"))
			wantEndedEverywhere(t, a.client, replicas, ended, lru.Access)
			refreshAt(t, a.client, b.URL, lru.Refresh, http.StatusUnauthorized)
			wantAcceptedEverywhere(t, a.client, replicas, first.Access)
			wantAcceptedEverywhere(t, a.client, replicas, third.Access)

			r := mustSend(t, a.client, http.MethodGet, b.URL+"/auth/sessions", nil, "Authorization", "Bearer "+third.Access).
				want(t, http.StatusOK)
			var list struct{ Total int }
			if err := json.Unmarshal(r.Body, &list); err != nil || list.Total != 2 {
				t.Errorf("GET /auth/sessions: total %d (%v), want 2", list.Total, err)
			}
			out := strings.TrimSpace(a.cli(t, "", "audit", "--json", "--type", "session.evicted").Stdout)
			var e auditLine
			if err := json.Unmarshal([]byte(out), &e); err != nil || strings.Contains(out, "\n") ||
				e.Username != "capped" || e.Family != tokenSID(t, lru.Access) {
				t.Errorf("audit --type session.evicted = %q, want one event of capped's session", out)
			}
		})
	}
}

// tokenSID returns the sid claim of a JWT, unverified.
func tokenSID(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	var c struct {
		SID string `json:"sid"`
	}
	if len(parts) != 3 {
		t.Fatal("not a compact JWT")
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[1]); err != nil || json.Unmarshal(b, &c) != nil || c.SID == "" {
		t.Fatal("unreadable JWT payload")
	}
	return c.SID
}
