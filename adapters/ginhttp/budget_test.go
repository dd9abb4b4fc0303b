package ginhttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/domain"
)

// fakeBudget is a ports.CallerBudget whose spent callers the test sets.
type fakeBudget struct {
	mu    sync.Mutex
	spent map[domain.Caller]time.Duration
}

func (b *fakeBudget) set(caller domain.Caller, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent[caller] = d
}

func (b *fakeBudget) Spent(caller domain.Caller) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent[caller]
}

func TestACallerWhoseDatabaseBudgetIsSpentGets429(t *testing.T) {
	t.Parallel()
	budget := &fakeBudget{spent: map[domain.Caller]time.Duration{}}
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator, o.EnableGuards = fakeAuth{}, true
		o.Limits = limits.Options{Budget: budget}
	})
	seedLarge(t, f, "mine", alice)
	id := benchEntryT(t, f, "mine", alice)
	base := f.listen(t)

	// A list alice started before her budget was spent: its answer is
	// about 10 MB, far more than the sockets hold, so it is still being
	// written when the budget runs out.
	inFlight := open(t, base, "", "/cache/mine?limit=1000", bearer(alice)...)
	inFlight.wantStatus(t, "alice's list", http.StatusOK)
	budget.set(domain.Caller{User: alice}, 1500*time.Millisecond)

	t.Run("her next request is refused with Retry-After and the error envelope", func(t *testing.T) {
		h := open(t, base, "", "/cache/mine/"+id, bearer(alice)...)
		h.wantStatus(t, "alice's GET with her budget spent", http.StatusTooManyRequests)
		if ra := h.resp.Header.Get("Retry-After"); ra != "2" {
			t.Errorf("Retry-After %q, want 2 (1.5 s rounded up)", ra)
		}
		var env struct {
			StatusCode int    `json:"statusCode"`
			Message    string `json:"message"`
			ErrorCode  string `json:"errorCode"`
		}
		if err := json.NewDecoder(h.resp.Body).Decode(&env); err != nil {
			t.Fatal(err)
		}
		if env.StatusCode != http.StatusTooManyRequests || env.ErrorCode != limits.CodeTooManyRequests || env.Message == "" {
			t.Errorf("body %+v, want the 429 envelope with code %s", env, limits.CodeTooManyRequests)
		}
	})
	t.Run("another caller is not affected", func(t *testing.T) {
		if st, _, _ := do(t, http.MethodGet, base+"/cache/mine", "", bearer(bob)...); st != http.StatusOK {
			t.Errorf("bob's list: %d, want 200", st)
		}
	})
	t.Run("the work in flight is not cut", func(t *testing.T) {
		var page []json.RawMessage
		if err := json.NewDecoder(inFlight.resp.Body).Decode(&page); err != nil {
			t.Fatalf("alice's list begun before her budget ran out: %v", err)
		}
		if len(page) != 51 {
			t.Errorf("alice's list begun before her budget ran out has %d entries, want all 51", len(page))
		}
		_, _ = io.Copy(io.Discard, inFlight.resp.Body)
	})
	t.Run("once it has refilled she is served again", func(t *testing.T) {
		budget.set(domain.Caller{User: alice}, 0)
		if st, _, _ := do(t, http.MethodGet, base+"/cache/mine/"+id, "", bearer(alice)...); st != http.StatusOK {
			t.Errorf("alice's GET once refilled: %d, want 200", st)
		}
	})
}

func TestAnonymousCallersHaveABudgetPerClientAddress(t *testing.T) {
	t.Parallel()
	budget := &fakeBudget{spent: map[domain.Caller]time.Duration{{Address: "127.0.0.1"}: 3 * time.Second}}
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator = fakeAuth{}
		o.Limits = limits.Options{Budget: budget}
	})
	base := f.listen(t)

	h := open(t, base, "127.0.0.1", "/cache/user?limit=1")
	h.wantStatus(t, "an anonymous list from an address whose budget is spent", http.StatusTooManyRequests)
	if ra := h.resp.Header.Get("Retry-After"); ra != "3" {
		t.Errorf("Retry-After %q, want 3", ra)
	}
	open(t, base, "127.0.0.2", "/cache/user?limit=1").wantStatus(t, "an anonymous list from another address", http.StatusOK)
	open(t, base, "127.0.0.1", "/cache/user?limit=1", bearer(alice)...).wantStatus(t, "alice's list from that address", http.StatusOK)
	open(t, base, "127.0.0.1", "/readyz").wantStatus(t, "the readiness probe from that address", http.StatusOK)
}
