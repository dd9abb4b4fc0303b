package josejwt

import (
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// cacheEntry is one verified access token.
type cacheEntry struct {
	claims domain.Claims
	// kid names the key that verified the token; a hit counts only while
	// that key may still verify.
	kid string
	// deadline is the token's exp plus the leeway: from then on the entry
	// is dead.
	deadline time.Time
}

// verifyCache remembers verified access tokens, keyed by the SHA-256 of
// the whole token string (so a hit needs the exact bytes that were
// verified, and the cache holds no token), so a repeated token skips
// parsing and the signature check. It holds at most
// max entries; when full it evicts an expired entry if one of a few it
// looks at is, else an arbitrary one. Safe for concurrent use.
type verifyCache struct {
	mu  sync.RWMutex
	m   map[tokenKey]cacheEntry
	max int
}

// evictProbe is how many entries put looks at for an expired one.
const evictProbe = 8

func newVerifyCache(max int) *verifyCache {
	return &verifyCache{m: make(map[tokenKey]cacheEntry, min(max, 1024)), max: max}
}

// tokenKey is a token's key in the cache: the digest of its exact
// string (domain.TokenDigest, which allocates nothing).
type tokenKey = domain.Digest

// get returns the live entry of token at now.
func (c *verifyCache) get(token string, now time.Time) (cacheEntry, bool) {
	k := domain.TokenDigest(token)
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok {
		return cacheEntry{}, false
	}
	if !now.Before(e.deadline) {
		c.mu.Lock()
		delete(c.m, k)
		c.mu.Unlock()
		return cacheEntry{}, false
	}
	return e, true
}

// put stores e for token at now, evicting one entry when full.
func (c *verifyCache) put(token string, e cacheEntry, now time.Time) {
	k := domain.TokenDigest(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		c.evictLocked(now)
	}
	c.m[k] = e
}

// evictLocked removes one entry: the first expired one among the first
// evictProbe of the map's (randomised) iteration order, else the first.
func (c *verifyCache) evictLocked(now time.Time) {
	var victim tokenKey
	seen := 0
	for k, e := range c.m {
		if seen == 0 {
			victim = k
		}
		if !now.Before(e.deadline) {
			victim = k
			break
		}
		if seen++; seen == evictProbe {
			break
		}
	}
	delete(c.m, victim)
}

// len returns the number of entries, for tests.
func (c *verifyCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
