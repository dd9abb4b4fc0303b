package ginhttp_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/domain"
)

// callerRecorder is a ports.CallerBudget that records whom it is asked
// about and refuses nobody.
type callerRecorder struct {
	mu    sync.Mutex
	asked []domain.Caller
}

func (b *callerRecorder) Spent(caller domain.Caller) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, caller)
	return 0
}

// The guard knows whom a request is served for (its actor's
// domain.Caller), whose budget of database time it checks: the user
// behind a valid token, otherwise the client's address.
func TestTheGuardNamesTheCaller(t *testing.T) {
	t.Parallel()
	budget := &callerRecorder{}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator = fakeAuth{}
		o.EnableGuards = true
		o.Limits = limits.Options{Budget: budget}
		o.Routes = []ginhttp.Route{
			{Method: http.MethodGet, Path: "/caller", Handler: ok},
			{Method: http.MethodGet, Path: "/open/caller", Handler: ok, Public: true},
		}
	})
	base := f.listen(t)
	for _, c := range []struct {
		name, path string
		header     []string
		want       domain.Caller
	}{
		{"a user on a guarded route", "/caller", []string{"Authorization", "Bearer good-" + alice}, domain.Caller{User: alice}},
		{"a user on a public route", "/open/caller", []string{"Authorization", "Bearer good-" + alice}, domain.Caller{User: alice}},
		{"an anonymous client on a public route", "/open/caller", nil, domain.Caller{Address: "127.0.0.1"}},
		{"a refused token on a public route", "/open/caller", []string{"Authorization", "Bearer nonsense"}, domain.Caller{Address: "127.0.0.1"}},
	} {
		status, _, b := do(t, http.MethodGet, base+c.path, "", c.header...)
		budget.mu.Lock()
		asked := budget.asked
		budget.asked = nil
		budget.mu.Unlock()
		if status != http.StatusNoContent || len(asked) != 1 || asked[0] != c.want {
			t.Errorf("%s: GET %s: %d %s, budget asked about %+v, want %+v", c.name, c.path, status, b, asked, c.want)
		}
	}
}
