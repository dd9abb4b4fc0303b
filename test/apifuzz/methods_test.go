package apifuzz_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

// An undocumented method on a documented path is refused by the router,
// 405 (or 404 where the router knows no route of that shape), never a 5xx
// and never a 2xx: what the document leaves out, the server does not do.
// Every path is asked with every method the document routes nowhere for
// that URL, with and without a valid token. OPTIONS is left out: a CORS preflight answers it
// when --cors-origins is set (README.md, "Configuration").
func TestUndocumentedMethodsAreRefused(t *testing.T) {
	t.Parallel()
	tgt := startTarget(t)
	doc, err := openapi3.NewLoader().LoadFromData(ginhttp.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	token := login(t, tgt)
	client := &http.Client{}
	asked := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		target := "http://" + tgt.addr + strings.NewReplacer("{assignment}", "user", "{id}", tgt.userID).Replace(path)
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodTrace, "PROPFIND"} {
			if item.GetOperation(method) != nil || (method == http.MethodHead && item.Get != nil) {
				continue
			}
			for _, bearer := range []string{"", token} {
				req, err := http.NewRequestWithContext(context.Background(), method, target, nil)
				if err != nil {
					t.Fatal(err)
				}
				// Another template may document it for this very URL
				// (PUT /cache/user/events is PUT /cache/{assignment}/{id}).
				if _, _, err := router.FindRoute(req); err == nil {
					continue
				}
				if bearer != "" {
					req.Header.Set("Authorization", "Bearer "+bearer)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", method, path, err)
				}
				_ = resp.Body.Close()
				asked++
				if resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
					t.Errorf("%s %s (token: %v) answered %d, want 405 or 404", method, path, bearer != "", resp.StatusCode)
				}
			}
		}
	}
	if asked == 0 {
		t.Fatal("no undocumented method was asked")
	}
}

// login returns an access token of the fuzzer's user.
func login(t *testing.T, tgt *target) string {
	t.Helper()
	body := strings.NewReader(`{"username":"` + fuzzUsername + `","password":"` + fuzzPassword + `"}`)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+tgt.addr+"/auth/login", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var pair struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&pair); err != nil || resp.StatusCode != http.StatusCreated || pair.AccessToken == "" {
		t.Fatalf("login answered %d (%v)", resp.StatusCode, err)
	}
	return pair.AccessToken
}
