// Package limits is the fairness room of the HTTP adapter: the caps on
// what one caller holds at once (lists, event streams, connections) and
// its budget of database time (README.md, "Fair share";
// ARCHITECTURE.md, "Per-caller caps").
package limits

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Fair share: what one caller may hold open at once (README.md, "Fair
// share"; ARCHITECTURE.md, "Per-caller caps").
const (
	// DefaultMaxListsPerUser bounds one caller's concurrent lists.
	DefaultMaxListsPerUser = 4
	// DefaultMaxStreamsPerUser bounds one caller's open event streams.
	DefaultMaxStreamsPerUser = 16
	// DefaultMaxConnsPerAddress bounds one client address's open
	// connections.
	DefaultMaxConnsPerAddress = 256
)

// Options cap what one caller holds at once, so that no caller takes
// goroutines, memory, file descriptors or database work away from the
// others. A zero field means its default; a negative one, no cap. A
// request beyond a cap is answered 429 TOO_MANY_REQUESTS with
// Retry-After: 1 and changes nothing else.
type Options struct {
	// ListsPerUser bounds the concurrent GET /cache/<a> lists of one
	// caller, from the route's start until the last byte is written or the
	// client went away.
	ListsPerUser int
	// StreamsPerUser bounds the open change-feed streams of one caller.
	StreamsPerUser int
	// ConnsPerAddress bounds the open connections of one client address
	// (see Caps.Listener). Connections from a trusted proxy
	// (Options.TrustedProxies) are not counted: the proxy carries many
	// clients. Instead, a request arriving through one counts against the
	// address X-Forwarded-For names while it is in flight.
	ConnsPerAddress int
	// Budget, when set, is each caller's budget of database time: a
	// request of a caller whose budget is spent is answered 429 with
	// Retry-After until it has refilled enough (the guard checks it once
	// it knows the caller; the work of requests admitted before goes on).
	Budget ports.CallerBudget
}

// withDefaults replaces zeros by the defaults and negative values by 0,
// which means no cap from here on.
func (l Options) withDefaults() Options {
	pick := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return Options{
		ListsPerUser:    pick(l.ListsPerUser, DefaultMaxListsPerUser),
		StreamsPerUser:  pick(l.StreamsPerUser, DefaultMaxStreamsPerUser),
		ConnsPerAddress: pick(l.ConnsPerAddress, DefaultMaxConnsPerAddress),
		Budget:          l.Budget,
	}
}

// capRetryAfter is the pause a refused caller is told to take. What the
// caller holds ends when written or when its client leaves, so a short
// pause is right.
const capRetryAfter = time.Second

// CodeTooManyRequests is the error code of a request beyond a per-caller
// cap. The login throttle's 429 has its own, TOO_MANY_ATTEMPTS.
const CodeTooManyRequests = "TOO_MANY_REQUESTS"

// tooMany is the answer to a request beyond a cap of limit things.
func tooMany(what string, limit int) *domain.Error {
	return &domain.Error{Kind: domain.KindTooMany, Code: CodeTooManyRequests, RetryAfter: capRetryAfter,
		Message: "too many " + what + " at once (the limit is " + strconv.Itoa(limit) + "); try again after Retry-After seconds"}
}

// Caps are a server's per-caller limiters; a nil limiter is no cap.
type Caps struct {
	lists, streams *keyLimiter
	// conns counts the open connections of each client address
	// (Listener) and, for requests through a trusted proxy, the requests
	// in flight of the forwarded address (Forwarded): one budget per
	// address, however it arrives.
	conns                                      *keyLimiter
	tooManyLists, tooManyStreams, tooManyConns *domain.Error
	budget                                     ports.CallerBudget
	host                                       *web.Host
	proxies                                    web.Proxies
}

// New returns the caps of l, answering refusals through host; proxies are
// the trusted proxies, whose connections are not counted.
func New(l Options, host *web.Host, proxies web.Proxies) *Caps {
	l = l.withDefaults()
	return &Caps{
		lists:          newKeyLimiter(l.ListsPerUser),
		streams:        newKeyLimiter(l.StreamsPerUser),
		conns:          newKeyLimiter(l.ConnsPerAddress),
		tooManyLists:   tooMany("lists of this caller", l.ListsPerUser),
		tooManyStreams: tooMany("event streams of this caller", l.StreamsPerUser),
		tooManyConns:   tooMany("connections or requests from this address", l.ConnsPerAddress),
		budget:         l.Budget,
		host:           host,
		proxies:        proxies,
	}
}

// CheckBudget answers 429 with Retry-After (whole seconds, rounded up) to
// a request whose caller (the domain.Caller of web.Actor: a user, or an
// anonymous client's address) has spent its budget of database time.
// Checking before the work and charging after it (bunstore.Budget) cuts
// nothing in flight.
func (s *Caps) CheckBudget(c *gin.Context) {
	if s.budget == nil {
		return
	}
	caller := web.Actor(c).Caller()
	if p := c.FullPath(); caller == (domain.Caller{}) || p == "/healthz" || p == "/readyz" {
		// The probes charge no caller and must answer whoever asks.
		return
	}
	if wait := s.budget.Spent(caller); wait > 0 {
		s.host.Fail(c, &domain.Error{Kind: domain.KindTooMany, Code: CodeTooManyRequests, RetryAfter: wait,
			Message: "your requests have used their share of database time; try again after Retry-After seconds"})
	}
}

// callerKey names the caller a per-user cap counts: the authenticated
// principal's subject, or for an anonymous caller (a public assignment,
// or guards off) its client address. The prefixes keep a subject that
// looks like an address apart from the address.
func (s *Caps) callerKey(r *http.Request) string {
	if p, ok := web.CurrentUser(r); ok {
		return "user:" + p.ID
	}
	return "addr:" + s.proxies.ClientAddr(r)
}

// List takes the caller's place among its concurrent lists, or answers
// 429 and reports false. The caller must release the slot when the list
// is written.
func (s *Caps) List(c *gin.Context) (Slot, bool) { return s.admit(c, s.lists, s.tooManyLists) }

// Stream takes the caller's place among its open event streams, as List.
func (s *Caps) Stream(c *gin.Context) (Slot, bool) { return s.admit(c, s.streams, s.tooManyStreams) }

// admit takes the caller's place under l for the request of c, or
// answers refused (429) and reports false.
func (s *Caps) admit(c *gin.Context, l *keyLimiter, refused *domain.Error) (Slot, bool) {
	key := s.callerKey(c.Request)
	if !l.acquire(key) {
		s.host.Fail(c, refused)
		return Slot{}, false
	}
	return Slot{l: l, key: key}, true
}

// Slot is one admitted request's place under a cap. The zero Slot holds
// nothing.
type Slot struct {
	l   *keyLimiter
	key string
}

// Release gives the place back; later calls do nothing.
func (s *Slot) Release() {
	if s.l != nil {
		s.l.release(s.key)
		s.l = nil
	}
}

// HandOff moves the place to the returned slot, for work that outlives
// the handler (a stream on a connection taken over): s's own Release no
// longer gives it back.
func (s *Slot) HandOff() Slot {
	n := *s
	s.l = nil
	return n
}

// Forwarded is the middleware holding a request that came through a
// trusted proxy to the connection cap of the address X-Forwarded-For
// names, while it is in flight; nil without trusted proxies or a
// connection cap.
func (s *Caps) Forwarded() gin.HandlerFunc {
	if len(s.proxies) == 0 || s.conns == nil {
		return nil
	}
	return s.capForwarded
}

func (s *Caps) capForwarded(c *gin.Context) {
	peer, ok := web.ParseHop(c.Request.RemoteAddr)
	if !ok || !s.proxies.Trusted(peer) {
		return
	}
	key := s.proxies.ClientAddr(c.Request)
	if a, ok := web.ParseHop(key); ok && s.proxies.Trusted(a) {
		// No untrusted hop: a proxy speaks for itself (health checks).
		return
	}
	if !s.conns.acquire(key) {
		s.host.Fail(c, s.tooManyConns)
		return
	}
	defer s.conns.release(key)
	c.Next()
}

// limiterShards spreads the keys over this many mutexes, so callers with
// different keys rarely wait for each other.
const limiterShards = 32

// keyLimiter counts how many places each key holds, up to max. A key is
// in the map only while it holds at least one place, so memory follows
// what is held now, not every caller ever seen.
type keyLimiter struct {
	max    int
	shards [limiterShards]limiterShard
}

type limiterShard struct {
	mu   sync.Mutex
	held map[string]int
}

// newKeyLimiter returns a limiter of max places per key, or nil (no
// limit) when max is not positive. The methods of a nil limiter admit
// everything.
func newKeyLimiter(max int) *keyLimiter {
	if max <= 0 {
		return nil
	}
	l := &keyLimiter{max: max}
	for i := range l.shards {
		l.shards[i].held = map[string]int{}
	}
	return l
}

func (l *keyLimiter) shard(key string) *limiterShard {
	// FNV-1a.
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return &l.shards[h%limiterShards]
}

// acquire takes one of key's places and reports whether there was one.
func (l *keyLimiter) acquire(key string) bool {
	if l == nil {
		return true
	}
	sh := l.shard(key)
	sh.mu.Lock()
	n := sh.held[key]
	ok := n < l.max
	if ok {
		sh.held[key] = n + 1
	}
	sh.mu.Unlock()
	return ok
}

// release gives back one of key's places; the key leaves the map with
// its last one.
func (l *keyLimiter) release(key string) {
	if l == nil {
		return
	}
	sh := l.shard(key)
	sh.mu.Lock()
	if n := sh.held[key]; n > 1 {
		sh.held[key] = n - 1
	} else {
		delete(sh.held, key)
	}
	sh.mu.Unlock()
}
