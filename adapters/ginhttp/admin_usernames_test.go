package ginhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// POST /admin/users refuses a username holding a control character (C0,
// DEL or C1) with 400 and the JSON error body naming the field, and
// creates nothing (domain.ValidateUsername, docs/admin.md).
func TestAdminAddUserRefusesControlCharactersInTheUsername(t *testing.T) {
	t.Parallel()
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	check := newOASChecker(t)
	if _, err := st.users.Add(context.Background(), domain.System(), application.AddUserInput{Username: "root", Password: oasPassword, Active: true, Admin: true}); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"username": "root", "password": oasPassword})
	x := oasSend(t, http.MethodPost, ts.URL+"/auth/login", "application/json", b)
	var pair struct{ AccessToken string }
	if err := json.Unmarshal(x.body, &pair); err != nil || pair.AccessToken == "" {
		t.Fatalf("login: %d", x.status)
	}
	auth := []string{"Authorization", "Bearer " + pair.AccessToken}
	for _, name := range []string{"ctl\nname", "esc\x1b[2J", "tab\there", "del\x7f", "csi\u009b2J", "trailing\n"} {
		t.Run(strings.ToValidUTF8(strings.ReplaceAll(name, "\n", "NL"), "?"), func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"username": name, "password": oasPassword})
			x := oasSend(t, http.MethodPost, ts.URL+"/admin/users", "application/json", body, auth...)
			var e struct {
				StatusCode int
				ErrorCode  string
				Details    []struct{ Field string }
			}
			if err := json.Unmarshal(x.body, &e); err != nil || x.status != http.StatusBadRequest || e.StatusCode != 400 ||
				e.ErrorCode != "VALIDATION_FAILED" || len(e.Details) != 1 || e.Details[0].Field != "username" {
				t.Fatalf("%d %.300s; want 400 VALIDATION_FAILED naming username", x.status, x.body)
			}
			check.checkResponse(t, x)
		})
	}
	users, err := st.users.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if strings.ContainsAny(u.Username, "\n\t\x1b\x7f\u009b") {
			t.Errorf("a refused username was stored: %q", u.Username)
		}
	}
}
