package bootstrap_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/bootstrap/httpfx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestAnExpensiveListIs422OverHTTP: with a bound on a list's statements
// far below what they take, a case-insensitive search sorted by key over
// thousands of long non-ASCII keys answers 422 QUERY_TOO_EXPENSIVE in the
// error envelope, on SQLite and on PostgreSQL. PostgreSQL's
// statement_timeout counts whole milliseconds, so its bound is 1 ms; on
// SQLite the bound is the statement's context, 1 µs (a fast machine ran
// this search within 1 ms there).
func TestAnExpensiveListIs422OverHTTP(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]struct {
		database func(t *testing.T) string
		bound    time.Duration
	}{
		"SQLite":     {func(t *testing.T) string { return "sqlite:" + t.TempDir() + "/expensive.db" }, time.Microsecond},
		"PostgreSQL": {func(t *testing.T) string { return pgtest.New(t) }, time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := config.Default()
			cfg.Addr = "127.0.0.1:0"
			cfg.Database = db.database(t)
			cfg.QueryTimeout = db.bound
			cfg.Auth.BcryptCost = 4
			cfg.Auth.EnableGuards = false
			a := cfg.Cache.Settings.Assignments[config.DefaultAssignment]
			a.Policy = domain.PolicyPublic
			cfg.Cache.Settings.Assignments[config.DefaultAssignment] = a
			// No quota: the fixture's writes take the plain statements.
			cfg.Cache.Settings.MaxEntries, cfg.Cache.Settings.MaxBytes = 0, 0
			var (
				addr  httpfx.Addr
				cache *application.Cache
			)
			app, err := bootstrap.Start(bootstrap.App(cfg, io.Discard, fx.Populate(&addr, &cache)))
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			t.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })

			const entries, workers = 4000, 8
			long := strings.Repeat("Ünïcödé ", 25)
			var (
				wg   sync.WaitGroup
				once sync.Once
				fail error
			)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < entries; i += workers {
						_, err := cache.Create(t.Context(), config.DefaultAssignment, application.CacheInput{
							Key: fmt.Sprintf("%s%05d", long, i), Type: "t", Data: []byte(`1`),
							AssigneeID: fmt.Sprintf("0190a000-0000-7000-8000-%012d", i%40),
						})
						if err != nil {
							once.Do(func() { fail = err })
							return
						}
					}
				}()
			}
			wg.Wait()
			if fail != nil {
				t.Fatal(fail)
			}

			q := url.Values{"filter": {"key||$contL||ÜNÏCÖDÉ 00"}, "sort": {"key,DESC"}, "limit": {"10"}}
			res, err := http.Get("http://" + addr.Get() + "/cache/user?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body struct {
				StatusCode int    `json:"statusCode"`
				ErrorCode  string `json:"errorCode"`
				Message    string `json:"message"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatalf("status %d, body not the JSON error envelope: %v", res.StatusCode, err)
			}
			if res.StatusCode != http.StatusUnprocessableEntity || body.StatusCode != 422 ||
				body.ErrorCode != "QUERY_TOO_EXPENSIVE" || body.Message == "" {
				t.Fatalf("expensive list: status %d, body %+v; want 422 QUERY_TOO_EXPENSIVE", res.StatusCode, body)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
		})
	}
}

// TestClientsThatDoNotReadTheirListsPinNoConnection: sixteen clients
// (four times the SQLite pool, twice PostgreSQL's on two cores; the
// per-caller caps off, so that only the database side is shown) each start
// a 20 MB list and stop reading it; every one of the lists starts (200),
// and another client's reads are served (200, not 503 after the 5 s
// database timeout), since a list waiting on its client holds no
// connection. The timeout is long enough that a loaded machine's slow
// statements do not reach it; a pinned pool would hold its connections
// for as long as the clients do, past any timeout.
func TestClientsThatDoNotReadTheirListsPinNoConnection(t *testing.T) {
	t.Parallel()
	for name, database := range map[string]func(t *testing.T) string{
		"SQLite":     func(t *testing.T) string { return "sqlite:" + t.TempDir() + "/pinned.db" },
		"PostgreSQL": func(t *testing.T) string { return pgtest.New(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			slowReaders(t, database(t))
		})
	}
}

// slowReaders runs TestClientsThatDoNotReadTheirListsPinNoConnection on
// database.
func slowReaders(t *testing.T, database string) {
	t.Helper()
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.Database = database
	cfg.DatabaseTimeout = 5 * time.Second
	// The per-caller caps (README, "Fair share") would refuse the fifth
	// anonymous list of one address, and its database time budget the
	// lists past a few seconds of reading; this test shows the pool
	// alone, so both are off.
	cfg.Caps = config.Caps{}
	cfg.DatabaseUserTime = 0
	cfg.Auth.BcryptCost = 4
	cfg.Auth.EnableGuards = false
	a := cfg.Cache.Settings.Assignments[config.DefaultAssignment]
	a.Policy = domain.PolicyPublic
	cfg.Cache.Settings.Assignments[config.DefaultAssignment] = a
	var (
		addr  httpfx.Addr
		cache *application.Cache
	)
	app, err := bootstrap.Start(bootstrap.App(cfg, io.Discard, fx.Populate(&addr, &cache)))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })
	data := []byte(`"` + strings.Repeat("x", 200<<10) + `"`)
	var first domain.Entry
	for i := range 100 {
		e, err := cache.Create(t.Context(), config.DefaultAssignment, application.CacheInput{
			Key: fmt.Sprint("big-", i), Type: "t", AssigneeID: "0190a000-0000-7000-8000-000000000001", Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = e
		}
	}

	const readers = 16
	for i := range readers {
		conn, err := net.Dial("tcp", addr.Get())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		if _, err := fmt.Fprintf(conn, "GET /cache/user?limit=1000 HTTP/1.1\r\nHost: cachegate\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		status, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
			t.Fatalf("slow reader %d: %q, %v; want its list to start", i, status, err)
		}
	}
	for _, path := range []string{"/cache/user/" + first.ID, "/cache/user?limit=1&fields=key"} {
		res, err := http.Get("http://" + addr.Get() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s beside %d clients not reading their lists: %d %.200s", path, readers, res.StatusCode, body)
		}
	}
}

// alice is the user the metering tests charge.
const alice = "0190a000-0000-7000-8000-000000000001"

// startMetered starts the app on SQLite with a budget of database time
// that any call spends (a nanosecond a second and at once), and returns
// its Go API and that budget.
func startMetered(t *testing.T) (*application.Cache, ports.CallerBudget) {
	t.Helper()
	cfg := config.Default()
	cfg.Addr = "127.0.0.1:0"
	cfg.Database = "sqlite:" + t.TempDir() + "/metered.db"
	cfg.Auth.BcryptCost = 4
	cfg.DatabaseUserTime, cfg.DatabaseUserBurst = time.Nanosecond, time.Nanosecond
	var (
		cache  *application.Cache
		budget ports.CallerBudget
	)
	app, err := bootstrap.Start(bootstrap.App(cfg, io.Discard, fx.Populate(&cache, &budget)))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })
	return cache, budget
}

// TestAGoAPICallAsAUserIsChargedToThatUser: a Go API call AsActor of a
// user is that user's database work, charged to her budget of database
// time (README, "Fair share of the database") as her HTTP requests are,
// with nothing in its context; a call as the system is nobody's.
func TestAGoAPICallAsAUserIsChargedToThatUser(t *testing.T) {
	t.Parallel()
	cache, budget := startMetered(t)
	in := application.CacheInput{Key: "k", Type: "t", AssigneeID: alice, Data: []byte(`1`)}
	if _, err := cache.Create(t.Context(), config.DefaultAssignment, in); err != nil {
		t.Fatal(err)
	}
	ref := application.CacheRef{Key: "k", Type: "t", AssigneeID: alice}
	if _, err := cache.Get(t.Context(), config.DefaultAssignment, ref); err != nil {
		t.Fatal(err)
	}
	if got := budget.Spent(domain.Caller{User: alice}); got != 0 {
		t.Fatalf("alice's budget after calls as the system: spent for %v, want untouched", got)
	}
	asAlice := application.AsActor(domain.AsPrincipal(domain.Principal{ID: alice}))
	if _, err := cache.Get(t.Context(), config.DefaultAssignment, ref, asAlice); err != nil {
		t.Fatal(err)
	}
	if got := budget.Spent(domain.Caller{User: alice}); got <= 0 {
		t.Errorf("alice's budget after a Go API call as her: %v left to wait, want it spent", got)
	}
}

// TestAResumedWatchAsAUserIsChargedToThatUser: a watch that resumes after
// a revision (as a stream reconnecting with Last-Event-ID) reads its
// backlog from the change log as the user's database work, charged to
// her budget (README, "Fair share of the database"), so she cannot
// repeat resumes for free; the feed's own reads are nobody's.
func TestAResumedWatchAsAUserIsChargedToThatUser(t *testing.T) {
	t.Parallel()
	cache, budget := startMetered(t)
	in := application.CacheInput{Key: "k", Type: "t", AssigneeID: alice, Data: []byte(`1`)}
	created, err := cache.Create(t.Context(), config.DefaultAssignment, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := budget.Spent(domain.Caller{User: alice}); got != 0 {
		t.Fatalf("alice's budget after a call as the system: spent for %v, want untouched", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	since := int64(0)
	asAlice := application.AsActor(domain.AsPrincipal(domain.Principal{ID: alice}))
	for ev, err := range cache.Watch(ctx, config.DefaultAssignment, application.WatchFilter{Since: &since}, asAlice) {
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if ev.Reset || ev.Change.Entry.ID != created.ID {
			t.Fatalf("first event %+v, want the change of %s", ev, created.ID)
		}
		break
	}
	if got := budget.Spent(domain.Caller{User: alice}); got <= 0 {
		t.Errorf("alice's budget after resuming a watch as her: %v left to wait, want it spent", got)
	}
}
