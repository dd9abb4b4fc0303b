package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// The sessions phase: one account logs in with its password in
// c.loopWorkers closed loops, each login a new session (README,
// "--max-sessions-per-user"). At the end its live sessions (GET
// /auth/sessions, total) must be at most the cap.

// loginLoop is the sessions phase's abuse; the account keeps the last
// access token it got, which the count of live sessions uses. A login in
// flight when the phase ends is let finish (within the client's
// timeout): a login whose client goes away after its session is stored
// may not end the oldest one, and the phase measures the cap, not that.
func loginLoop(ctx context.Context, a *attacker, c config) {
	acc := a.accounts["sessions"]
	client := newClient(c.accountAddr, c.loopWorkers, 30*time.Second)
	defer client.CloseIdleConnections()
	body := map[string]string{"username": "sessions", "password": acc.password}
	var wg sync.WaitGroup
	for range c.loopWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				code, answer, err := doJSON(context.WithoutCancel(ctx), client, http.MethodPost, a.base+"/auth/login", "", body)
				switch {
				case err != nil:
					a.counts.add("err")
					continue
				}
				a.counts.status(code)
				var tok struct {
					AccessToken string `json:"accessToken"`
				}
				if code == http.StatusCreated && json.Unmarshal(answer, &tok) == nil && tok.AccessToken != "" {
					acc.mu.Lock()
					acc.token = tok.AccessToken
					acc.mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
}

// sessionsResult is what the sessions phase left.
type sessionsResult struct {
	logins int   // logins answered 201
	live   int64 // the account's live sessions at the end
	limit  int64 // the server's --max-sessions-per-user
	db     int64 // the database's growth over the phase
	audit  int64 // the audit tables' growth
}

func (r sessionsResult) missed() bool { return r.live > r.limit }

// sessionCap is the server's --max-sessions-per-user: its default, or
// CACHEGATE_MAX_SESSIONS_PER_USER when the run sets it.
func sessionCap() int64 {
	if n, err := strconv.ParseInt(os.Getenv("CACHEGATE_MAX_SESSIONS_PER_USER"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 100
}

// liveSessions returns the total of GET /auth/sessions for the token's
// user.
func liveSessions(ctx context.Context, client *http.Client, base, token string) (int64, error) {
	code, body, err := doJSON(ctx, client, http.MethodGet, base+"/auth/sessions?limit=1", token, nil)
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("GET /auth/sessions: status %d", code)
	}
	var page struct {
		Total *int64 `json:"total"`
	}
	if err := json.Unmarshal(body, &page); err != nil || page.Total == nil {
		return 0, fmt.Errorf("GET /auth/sessions: no total in the answer")
	}
	return *page.Total, nil
}

// finishSessions counts the looping account's live sessions after its
// phase, with the last token it got.
func finishSessions(ctx context.Context, c config, a *attacker, before, after sizes) (*sessionsResult, error) {
	acc := a.accounts["sessions"]
	acc.mu.Lock()
	token := acc.token
	acc.mu.Unlock()
	r := &sessionsResult{logins: a.counts.snapshot()["201"], limit: sessionCap(), db: after.db - before.db, audit: after.audit - before.audit}
	if token == "" {
		return r, fmt.Errorf("the login loop got no token")
	}
	client := newClient(c.accountAddr, 1, 10*time.Second)
	defer client.CloseIdleConnections()
	n, err := liveSessions(ctx, client, a.base, token)
	if err != nil {
		return r, err
	}
	r.live = n
	return r, nil
}

// writeSessions prints the sessions phase's line.
func writeSessions(w io.Writer, r *sessionsResult) {
	fmt.Fprintf(w, "%-8s logins %d; live sessions at the end %d (cap %d); growth: audit tables %s, database %s\n", "",
		r.logins, r.live, r.limit, mib(float64(r.audit)), mib(float64(r.db)))
}
