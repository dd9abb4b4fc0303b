package ginhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// oasAdminLogin makes an admin "root" on the OpenAPI stack and returns
// the Authorization header of its session.
func oasAdminLogin(t *testing.T, st *oasStack, url string) []string {
	t.Helper()
	if _, err := st.users.Add(context.Background(), domain.System(), application.AddUserInput{Username: "root", Password: oasPassword, Active: true, Admin: true}); err != nil {
		t.Fatal(err)
	}
	return oasLogin(t, url, "root")
}

func oasLogin(t *testing.T, url, username string) []string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"username": username, "password": oasPassword})
	x := oasSend(t, http.MethodPost, url+"/auth/login", "application/json", b, "User-Agent", "agent-of-"+username)
	var pair struct{ AccessToken string }
	if err := json.Unmarshal(x.body, &pair); err != nil || pair.AccessToken == "" {
		t.Fatalf("login of %s: %d", username, x.status)
	}
	return []string{"Authorization", "Bearer " + pair.AccessToken}
}

// GET /admin/sessions lists every user's live sessions, each with its
// user's id and name, paged, as openapi.json describes.
func TestAdminListsEverySession(t *testing.T) {
	t.Parallel()
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	check := newOASChecker(t)
	auth := oasAdminLogin(t, st, ts.URL)
	oasLogin(t, ts.URL, oasUsername)
	oasLogin(t, ts.URL, oasUsername)

	var page struct {
		Data []struct {
			ID, UserID, Username, UserAgent string
		}
		Count, Total, Page, PageCount int
	}
	x := oasSend(t, http.MethodGet, ts.URL+"/admin/sessions?limit=2&page=2", "", nil, auth...)
	if x.status != http.StatusOK {
		t.Fatalf("GET /admin/sessions: %d %s", x.status, x.body)
	}
	check.checkResponse(t, x)
	if err := json.Unmarshal(x.body, &page); err != nil {
		t.Fatal(err)
	}
	if page.Total != 3 || page.Count != 1 || page.Page != 2 || page.PageCount != 2 || len(page.Data) != 1 {
		t.Errorf("page 2 of 2: %+v", page)
	}
	x = oasSend(t, http.MethodGet, ts.URL+"/admin/sessions", "", nil, auth...)
	if err := json.Unmarshal(x.body, &page); err != nil || x.status != http.StatusOK {
		t.Fatalf("GET /admin/sessions: %d %v", x.status, err)
	}
	byName := map[string]int{}
	for _, s := range page.Data {
		byName[s.Username]++
		if s.UserAgent != "agent-of-"+s.Username || s.UserID == "" || s.ID == "" {
			t.Errorf("session %+v", s)
		}
		if s.Username == oasUsername && s.UserID != st.userID {
			t.Errorf("%s's session names user %s, want %s", oasUsername, s.UserID, st.userID)
		}
	}
	if byName["root"] != 1 || byName[oasUsername] != 2 {
		t.Errorf("sessions by user: %v, want root 1, %s 2", byName, oasUsername)
	}
	for _, q := range []string{"?sort=lastUsed", "?limit=0", "?page=x"} {
		x := oasSend(t, http.MethodGet, ts.URL+"/admin/sessions"+q, "", nil, auth...)
		if x.status != http.StatusBadRequest {
			t.Errorf("GET /admin/sessions%s: %d, want 400", q, x.status)
		}
		check.checkResponse(t, x)
	}
}

// The admin API opens, replaces (with If-Match, never creating) and
// deletes an entry of any assignee, answering as openapi.json says.
func TestAdminOpensEditsAndDeletesAnyEntry(t *testing.T) {
	t.Parallel()
	st := newOASStack(t, nil)
	ts := httptest.NewServer(st.server.Handler())
	t.Cleanup(ts.Close)
	check := newOASChecker(t)
	auth := oasAdminLogin(t, st, ts.URL)
	owner := oasLogin(t, ts.URL, oasUsername)

	body := `{"key":"k1","type":"note","data":{"n":1},"assignee":{"id":"` + st.userID + `"}}`
	x := oasSend(t, http.MethodPost, ts.URL+"/cache/user", "application/json", []byte(body), owner...)
	var e struct {
		ID      string
		Version int
		Data    map[string]int
	}
	if err := json.Unmarshal(x.body, &e); err != nil || x.status != http.StatusCreated {
		t.Fatalf("POST /cache/user: %d %s", x.status, x.body)
	}
	item := ts.URL + "/admin/cache/user/" + e.ID
	const nobody = "0190a000-0000-7000-8000-000000000000"
	edit := `{"key":"k1","type":"note","data":{"n":2},"assignee":{"id":"` + st.userID + `"}}`
	v := strconv.Itoa(e.Version)
	for _, c := range []struct {
		method, url, body string
		hdr               []string
		status            int
	}{
		{http.MethodGet, item, "", nil, 200},
		{http.MethodGet, ts.URL + "/admin/cache/user/" + nobody, "", nil, 404},
		{http.MethodGet, ts.URL + "/admin/cache/nope/" + e.ID, "", nil, 404},
		// A stale version is 412 and changes nothing.
		{http.MethodPut, item, edit, []string{"If-Match", `"` + strconv.Itoa(e.Version+5) + `"`}, 412},
		{http.MethodPut, item, edit, []string{"If-None-Match", "*"}, 400},
		{http.MethodPut, item, `{"key":"k1"}`, []string{"If-Match", `"` + v + `"`}, 400},
		// PUT never creates an entry.
		{http.MethodPut, ts.URL + "/admin/cache/user/" + nobody, edit, nil, 404},
		{http.MethodPut, item, edit, []string{"If-Match", `"` + v + `"`}, 200},
		{http.MethodDelete, item, "", []string{"If-Match", `"` + v + `"`}, 412},
		{http.MethodDelete, item, "", nil, 200},
		{http.MethodGet, item, "", nil, 404},
	} {
		var b []byte
		if c.body != "" {
			b = []byte(c.body)
		}
		x := oasSend(t, c.method, c.url, "application/json", b, append(append([]string{}, auth...), c.hdr...)...)
		if x.status != c.status {
			t.Errorf("%s %s %v: %d, want %d (%.200s)", c.method, c.url, c.hdr, x.status, c.status, x.body)
			continue
		}
		check.checkResponse(t, x)
		if c.method == http.MethodPut && c.status == 200 {
			var got struct {
				Version int
				Data    map[string]int
			}
			_ = json.Unmarshal(x.body, &got)
			if got.Version != e.Version+1 || got.Data["n"] != 2 || x.header.Get("ETag") != `"`+strconv.Itoa(got.Version)+`"` {
				t.Errorf("the replaced entry: %+v, ETag %q", got, x.header.Get("ETag"))
			}
		}
	}
	// The owner sees the admin's delete.
	if x := oasSend(t, http.MethodGet, ts.URL+"/cache/user/"+e.ID, "", nil, owner...); x.status != http.StatusNotFound {
		t.Errorf("the owner's GET after the admin's delete: %d, want 404", x.status)
	}
}
