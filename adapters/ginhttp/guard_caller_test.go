package ginhttp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/ports"
)

// The guard names whom a request is served for (ports.Caller), which
// storage uses to share the database fairly: the user behind a valid
// token, otherwise the client's address.
func TestTheGuardNamesTheCaller(t *testing.T) {
	t.Parallel()
	caller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"caller": ports.Caller(r.Context())})
	})
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator = fakeAuth{}
		o.EnableGuards = true
		o.Routes = []ginhttp.Route{
			{Method: http.MethodGet, Path: "/caller", Handler: caller},
			{Method: http.MethodGet, Path: "/open/caller", Handler: caller, Public: true},
		}
	})
	base := f.listen(t)
	for _, c := range []struct {
		name, path string
		header     []string
		want       string
	}{
		{"a user on a guarded route", "/caller", []string{"Authorization", "Bearer good-" + alice}, "user:" + alice},
		{"a user on a public route", "/open/caller", []string{"Authorization", "Bearer good-" + alice}, "user:" + alice},
		{"an anonymous client on a public route", "/open/caller", nil, "address:127.0.0.1"},
		{"a refused token on a public route", "/open/caller", []string{"Authorization", "Bearer nonsense"}, "address:127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, _, b := do(t, http.MethodGet, base+c.path, "", c.header...)
			var got struct{ Caller string }
			if err := json.Unmarshal([]byte(b), &got); err != nil || status != http.StatusOK || got.Caller != c.want {
				t.Errorf("GET %s: %d %s, want caller %q", c.path, status, b, c.want)
			}
		})
	}
}
