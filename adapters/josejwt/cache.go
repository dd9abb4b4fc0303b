package josejwt

import (
	"strings"
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

// verifyCache remembers verified access tokens, keyed by the whole token
// string (so a hit needs the exact bytes that were verified), so a
// repeated token skips parsing and the signature check. It holds at most
// max entries; when full it evicts an expired entry if one of a few it
// looks at is, else an arbitrary one. Safe for concurrent use.
type verifyCache struct {
	mu  sync.RWMutex
	m   map[string]cacheEntry
	max int
}

// evictProbe is how many entries put looks at for an expired one.
const evictProbe = 8

func newVerifyCache(max int) *verifyCache {
	return &verifyCache{m: make(map[string]cacheEntry, min(max, 1024)), max: max}
}

// get returns the live entry of token at now.
func (c *verifyCache) get(token string, now time.Time) (cacheEntry, bool) {
	c.mu.RLock()
	e, ok := c.m[token]
	c.mu.RUnlock()
	if !ok {
		return cacheEntry{}, false
	}
	if !now.Before(e.deadline) {
		c.mu.Lock()
		delete(c.m, token)
		c.mu.Unlock()
		return cacheEntry{}, false
	}
	return e, true
}

// put stores e for token at now, evicting one entry when full.
func (c *verifyCache) put(token string, e cacheEntry, now time.Time) {
	// Clone so the cache never pins a larger buffer the token was cut from.
	token = strings.Clone(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[token]; !ok && len(c.m) >= c.max {
		c.evictLocked(now)
	}
	c.m[token] = e
}

// evictLocked removes one entry: the first expired one among the first
// evictProbe of the map's (randomised) iteration order, else the first.
func (c *verifyCache) evictLocked(now time.Time) {
	victim, seen := "", 0
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
