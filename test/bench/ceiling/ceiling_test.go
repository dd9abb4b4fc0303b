package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/test/pgtest"
)

// call sends one request and returns its status and body.
func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestTheFrameworkFloorsSayHello(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"nethttp", "gin"} {
		h, err := newHandler(context.Background(), mode, "", 0, 1, 4)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(h)
		if code, body := call(t, http.MethodGet, ts.URL+"/hello", "", ""); code != 200 || body != "Hello, World!" {
			t.Errorf("%s: GET /hello = %d %q", mode, code, body)
		}
		ts.Close()
	}
}

// The paths test/bench/run drives answer as it expects, on both databases.
func TestTheHotPathsAnswerAsTheBenchmarkExpects(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"sqlite", "pg"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dsn := "file:" + filepath.Join(t.TempDir(), "ceiling.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
			if mode == "pg" {
				dsn = pgtest.New(t)
			}
			h, err := newHandler(context.Background(), mode, dsn, 50, 2, 4)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			_, token := call(t, http.MethodGet, ts.URL+"/token", "", "")
			code, ids := call(t, http.MethodGet, ts.URL+"/ids?n=10", "", "")
			if lines := strings.Fields(ids); code != 200 || len(lines) != 10 {
				t.Fatalf("GET /ids?n=10 = %d, %d ids", code, len(lines))
			}
			id := strings.Fields(ids)[0]
			if code, body := call(t, http.MethodGet, ts.URL+"/cache/"+id, token, ""); code != 200 || !strings.Contains(body, `"id":"`+id+`"`) {
				t.Errorf("GET /cache/:id = %d %s", code, body)
			}
			if code, _ := call(t, http.MethodGet, ts.URL+"/cache/"+id, "", ""); code != 401 {
				t.Errorf("GET /cache/:id without a token = %d, want 401", code)
			}
			if code, body := call(t, http.MethodPost, ts.URL+"/cache", token,
				`{"key":"k","type":"t","data":"d","assignee":{"id":"user-1"}}`); code != 201 {
				t.Errorf("POST /cache = %d %s", code, body)
			}
			code, body := call(t, http.MethodPost, ts.URL+"/auth/login", "", `{"username":"user","password":"Test1234!"}`)
			var pair struct{ AccessToken, RefreshToken string }
			if err := json.Unmarshal([]byte(body), &pair); code != 201 || err != nil || pair.RefreshToken == "" {
				t.Fatalf("POST /auth/login = %d", code)
			}
			if code, _ := call(t, http.MethodPost, ts.URL+"/auth/login", "", `{"username":"user","password":"wrong"}`); code != 401 {
				t.Errorf("a wrong password = %d, want 401", code)
			}
			if code, _ := call(t, http.MethodPost, ts.URL+"/auth/refresh", "", `{"refreshToken":"`+pair.RefreshToken+`"}`); code != 201 {
				t.Errorf("POST /auth/refresh = %d", code)
			}
		})
	}
}
