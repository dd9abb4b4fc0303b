package ginhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// The self-service and the admin session lists page as the user list
// does: limit (or per_page), page, offset; {data, count, total, page,
// pageCount}; parameters of no list are 400.
func TestSessionListsArePaged(t *testing.T) {
	t.Parallel()
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	check := newOASChecker(t)
	if _, err := st.users.Add(context.Background(), domain.System(), application.AddUserInput{Username: "root", Password: oasPassword, Active: true, Admin: true}); err != nil {
		t.Fatal(err)
	}
	signIn := func(user string) string {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"username": user, "password": oasPassword})
		x := oasSend(t, http.MethodPost, ts.URL+"/auth/login", "application/json", b)
		var pair struct{ AccessToken string }
		if err := json.Unmarshal(x.body, &pair); err != nil || pair.AccessToken == "" {
			t.Fatalf("login: %d", x.status)
		}
		return pair.AccessToken
	}
	const sessions = 5
	var mine string
	for range sessions {
		mine = signIn(oasUsername)
	}
	root := signIn("root")
	type page struct {
		Data []struct {
			ID      string
			Current *bool
		}
		Count, Total, Page, PageCount int
	}
	get := func(path, token string, status int) page {
		t.Helper()
		x := oasSend(t, http.MethodGet, ts.URL+path, "", nil, "Authorization", "Bearer "+token)
		if x.status != status {
			t.Fatalf("GET %s: %d, want %d (%.200s)", path, x.status, status, x.body)
		}
		check.checkResponse(t, x)
		var p page
		if status == http.StatusOK {
			if err := json.Unmarshal(x.body, &p); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	for _, list := range []struct{ path, token string }{
		{"/auth/sessions", mine},
		{"/admin/users/" + st.userID + "/sessions", root},
	} {
		all := get(list.path, list.token, http.StatusOK)
		if len(all.Data) != sessions || all.Count != sessions || all.Total != sessions || all.Page != 1 || all.PageCount != 1 {
			t.Fatalf("%s: %+v, want the %d sessions on one page", list.path, all, sessions)
		}
		var paged []string
		for n := 1; n <= 3; n++ {
			p := get(list.path+"?limit=2&page="+string(rune('0'+n)), list.token, http.StatusOK)
			want := min(2, sessions-2*(n-1))
			if p.Count != want || len(p.Data) != want || p.Total != sessions || p.Page != n || p.PageCount != 3 {
				t.Errorf("%s page %d of 2: %+v", list.path, n, p)
			}
			for _, s := range p.Data {
				paged = append(paged, s.ID)
			}
		}
		var ids []string
		for _, s := range all.Data {
			ids = append(ids, s.ID)
		}
		if !slices.Equal(paged, ids) {
			t.Errorf("%s: the pages hold %v, the whole list %v", list.path, paged, ids)
		}
		if p := get(list.path+"?per_page=2&offset=4", list.token, http.StatusOK); p.Count != 1 || p.Page != 3 || p.Data[0].ID != ids[4] {
			t.Errorf("%s?per_page=2&offset=4: %+v", list.path, p)
		}
		if p := get(list.path+"?page=9", list.token, http.StatusOK); p.Count != 0 || p.Data == nil || p.Total != sessions {
			t.Errorf("%s past the end: %+v, want an empty page with the total", list.path, p)
		}
		for _, bad := range []string{"?limit=0", "?limit=1001", "?page=0", "?offset=-1", "?sort=id", "?limit=x"} {
			get(list.path+bad, list.token, http.StatusBadRequest)
		}
	}
	// The self-service list marks the caller's own session on every page.
	current := 0
	for n := 1; n <= 3; n++ {
		for _, s := range get("/auth/sessions?limit=2&page="+string(rune('0'+n)), mine, http.StatusOK).Data {
			if s.Current == nil {
				t.Fatalf("session %s has no current", s.ID)
			}
			if *s.Current {
				current++
			}
		}
	}
	if current != 1 {
		t.Errorf("%d sessions marked current, want 1", current)
	}
}
