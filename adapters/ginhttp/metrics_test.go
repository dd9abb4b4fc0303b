package ginhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/domain"
)

// userAuth admits the bearer token "user-token" as a user.
type userAuth struct{}

func (userAuth) Authenticate(_ context.Context, tok string) (domain.Principal, error) {
	if tok == "user-token" {
		return domain.Principal{ID: "01a21b5e-9954-7e4e-9eb9-6cf333a1f290", Username: "ada"}, nil
	}
	return domain.Principal{}, domain.ErrUnauthenticated
}

func TestMetricsOnTheMainAddressNeedTheMetricsTokenOrAnAdmin(t *testing.T) {
	t.Parallel()
	scrape := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("up 1\n")) })
	const token = "metrics-token-0123456789"
	serve := func(t *testing.T, o ginhttp.Options) string {
		t.Helper()
		srv, err := ginhttp.New(o)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		t.Cleanup(ts.Close)
		return ts.URL
	}
	guarded := serve(t, ginhttp.Options{Authenticator: userAuth{}, EnableGuards: true,
		Metrics: &ginhttp.MetricsOptions{Handler: scrape, Token: token}})
	open := serve(t, ginhttp.Options{Authenticator: userAuth{}, EnableGuards: false,
		Metrics: &ginhttp.MetricsOptions{Handler: scrape, Token: token}})
	noToken := serve(t, ginhttp.Options{Authenticator: userAuth{}, EnableGuards: true,
		Metrics: &ginhttp.MetricsOptions{Handler: scrape}})
	admins := serve(t, ginhttp.Options{Authenticator: userAuth{}, EnableGuards: true,
		Metrics: &ginhttp.MetricsOptions{Handler: scrape, Admin: func(_ context.Context, a domain.Actor) bool { return a.Authenticated() }}})
	for _, c := range []struct {
		name, base, auth string
		status           int
	}{
		{"the metrics token is served", guarded, "Bearer " + token, 200},
		{"the metrics token's scheme is case-insensitive", guarded, "bearer " + token, 200},
		{"no credentials are 401", guarded, "", 401},
		{"a wrong token is 401", guarded, "Bearer " + strings.Repeat("x", len(token)), 401},
		{"a prefix of the token is 401", guarded, "Bearer " + token[:len(token)-1], 401},
		{"a user who is not an administrator is 403", guarded, "Bearer user-token", 403},
		{"with guards disabled no credentials are still 401", open, "", 401},
		{"with guards disabled the token is served", open, "Bearer " + token, 200},
		{"without a configured token an empty bearer is no key", noToken, "Bearer ", 401},
		{"without a configured token a user is still 403", noToken, "Bearer user-token", 403},
		{"an administrator is served", admins, "Bearer user-token", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var hdr []string
			if c.auth != "" {
				hdr = []string{"Authorization", c.auth}
			}
			status, h, body := do(t, http.MethodGet, c.base+"/metrics", "", hdr...)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if status == 200 && body != "up 1\n" {
				t.Fatalf("body %q, want the scrape", body)
			}
			if status != 200 && !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Fatalf("refusal is not in the JSON envelope: %s %s", h.Get("Content-Type"), body)
			}
			if strings.Contains(body, token) {
				t.Fatal("the answer quotes the metrics token")
			}
		})
	}
}
