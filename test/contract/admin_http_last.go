package contract

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// AdminHTTPLastAdmin runs the contract that at least one active admin
// always remains (docs/admin.md) on a service of its own from h, whose
// database must hold no other admin: round after round, two admins
// demote or disable each other at once. One is answered 200; the other
// 409 LAST_ADMIN when its change reached the store after the first, or
// 401 or 403 when the service already saw it demoted or disabled; one
// active admin remains.
func AdminHTTPLastAdmin(t *testing.T, h AdminHTTPHarness) {
	t.Helper()
	tg := h(t)
	if tg.Client == nil {
		tg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	s := &adSuite{t: tg}
	var names, ids, tokens [2]string
	for i := range 2 {
		names[i], ids[i] = s.user(t, "last", true)
		tokens[i] = s.login(t, names[i], adPassword, "last").Access
	}
	refused := 0
	const rounds = 12
	for round := range rounds {
		field := map[bool]string{true: "admin", false: "active"}[round%2 == 0]
		var (
			answers [2]adAnswer
			errs    [2]error
			wg      sync.WaitGroup
		)
		start := make(chan struct{})
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				answers[i], errs[i] = s.patch(tokens[i], ids[1-i], map[string]any{field: false})
			}()
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: %v, %v", round, errs[0], errs[1])
		}
		winner := -1
		for i, a := range answers {
			if a.status == http.StatusOK {
				if winner != -1 {
					t.Fatalf("round %d: both admins' %s=false answered 200: no admin is left", round, field)
				}
				winner = i
			}
		}
		if winner == -1 {
			t.Fatalf("round %d: %s=false answered %d and %d, want one 200", round, field, answers[0].status, answers[1].status)
		}
		loser := answers[1-winner]
		var e struct {
			ErrorCode string `json:"errorCode"`
		}
		_ = json.Unmarshal(loser.body, &e)
		switch {
		case loser.status == http.StatusConflict && e.ErrorCode == "LAST_ADMIN":
			refused++
		case loser.status == http.StatusUnauthorized || loser.status == http.StatusForbidden:
		default:
			t.Fatalf("round %d: the second %s=false answered %d %s, want 409 LAST_ADMIN (or 401/403)", round, field, loser.status, e.ErrorCode)
		}
		var page struct{ Total int }
		s.send(t, http.MethodGet, "/admin/users?filter="+url.QueryEscape("admin||$eq||true")+"&filter="+url.QueryEscape("active||$eq||true"),
			tokens[winner], nil).decode(t, &page)
		if page.Total != 1 {
			t.Fatalf("round %d: %d active admins, want 1", round, page.Total)
		}
		// The survivor restores the other, who signs in again if its
		// sessions ended.
		l := 1 - winner
		s.expect(t, s.send(t, http.MethodPatch, "/admin/users/"+ids[l], tokens[winner], map[string]any{"admin": true, "active": true}),
			http.StatusOK, "restore")
		if field == "active" {
			tokens[l] = s.login(t, names[l], adPassword, "last").Access
		}
	}
	t.Logf("%d of %d rounds refused the second change in the store (409 LAST_ADMIN), the others at the admin check", refused, rounds)
}

// patch sends PATCH /admin/users/{id}; it may run on any goroutine.
func (s *adSuite) patch(token, id string, body any) (adAnswer, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return adAnswer{}, err
	}
	req, err := http.NewRequest(http.MethodPatch, s.t.BaseURL+"/admin/users/"+id, bytes.NewReader(b))
	if err != nil {
		return adAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.t.Client.Do(req)
	if err != nil {
		return adAnswer{}, err
	}
	defer resp.Body.Close()
	b, err = io.ReadAll(resp.Body)
	return adAnswer{status: resp.StatusCode, header: resp.Header, body: b}, err
}
