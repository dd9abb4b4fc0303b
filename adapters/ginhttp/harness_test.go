package ginhttp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

func newFakeClock() *system.ManualClock {
	return system.NewManualClock(time.Date(2026, 11, 25, 10, 0, 0, 123456000, time.UTC))
}

// lockedBuffer collects log output from concurrent requests.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fixture is one server over memstore with three assignments: user and
// org (public) and mine (owner).
type fixture struct {
	clock  *system.ManualClock
	cache  *application.CacheOperations
	server *ginhttp.Server
	logs   *lockedBuffer
}

// newFixture builds the use cases and the server; tweak adjusts the
// options before New.
// smallQuota is the quota of the fixture's assignment "small".
var smallQuota = domain.Quota{MaxEntries: 4, MaxBytes: 4 << 10}

func newFixture(t testing.TB, tweak func(*ginhttp.Options)) *fixture {
	t.Helper()
	return newTracedFixture(t, nil, tweak)
}

// newTracedFixture is newFixture with the use cases traced by tracer
// (nil: not traced).
func newTracedFixture(t testing.TB, tracer ports.Tracer, tweak func(*ginhttp.Options)) *fixture {
	t.Helper()
	clock := newFakeClock()
	feed, repo := newTestFeed(t, clock)
	stores, err := application.NewAssignments(
		application.Assignment{Name: "user", EntityKey: "userCache", Table: "user_cache", Repo: repo("user_cache"), Policy: domain.PolicyPublic},
		application.Assignment{Name: "org", EntityKey: "orgCache", Table: "org_cache", Repo: repo("org_cache"), Policy: domain.PolicyPublic},
		application.Assignment{Name: "mine", EntityKey: "mineCache", Table: "mine_cache", Repo: repo("mine_cache"), Policy: domain.PolicyOwner},
		application.Assignment{Name: "small", EntityKey: "smallCache", Table: "small_cache", Repo: repo("small_cache"),
			Policy: domain.PolicyPublic, Quota: smallQuota},
	)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: system.UUIDv7{},
		Feed: feed, Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	opts := ginhttp.Options{
		Cache:  uc,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
	}
	if tweak != nil {
		tweak(&opts)
	}
	srv, err := ginhttp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{clock: clock, cache: uc, server: srv, logs: logs}
}

// listen serves the fixture on a real loopback listener.
func (f *fixture) listen(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(f.server.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// pinger is a readiness check with a chosen answer.
type pinger struct {
	err   error
	block bool
}

func (p pinger) Ping(ctx context.Context) error {
	if p.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return p.err
}

// do sends one request to base and returns status, headers and body.
func do(t *testing.T, method, url string, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	var rd *bytes.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	var req *http.Request
	var err error
	if rd != nil {
		req, err = http.NewRequest(method, url, rd)
	} else {
		req, err = http.NewRequest(method, url, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b.String()
}

// newTestFeed runs a change feed over an in-memory log for the test's
// lifetime and returns it with a constructor of repositories that record
// into it, by table.
func newTestFeed(t testing.TB, clock ports.Clock) (*background.Feed, func(table string) ports.CacheRepository) {
	t.Helper()
	log := memstore.NewChangeLog()
	feed, err := background.NewFeed(background.FeedConfig{Log: log, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return feed, func(table string) ports.CacheRepository { return feed.Observe(log.Repository(table)) }
}
