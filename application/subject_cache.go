package application

import (
	"context"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SubjectCache remembers the principals a ports.UserLookup returned for
// token subjects for TTL, so the guard does not query the user store on
// every request: a user disabled or deleted is still let in for at most
// TTL. Failed lookups are not cached.
type SubjectCache struct {
	ports.UserLookup
	ttl   time.Duration
	max   int
	clock ports.Clock

	mu      sync.RWMutex
	entries map[string]cachedPrincipal
}

type cachedPrincipal struct {
	p       domain.Principal
	expires time.Time
}

// NewSubjectCache wraps lookup; ttl ≤ 0 returns lookup itself. max bounds
// the number of remembered subjects (default 10 000).
func NewSubjectCache(lookup ports.UserLookup, ttl time.Duration, max int, clock ports.Clock) ports.UserLookup {
	if ttl <= 0 {
		return lookup
	}
	return &SubjectCache{UserLookup: lookup, ttl: ttl, max: positive(max, 10000), clock: clock, entries: map[string]cachedPrincipal{}}
}

// BySubject implements ports.UserLookup.
func (c *SubjectCache) BySubject(ctx context.Context, subject string) (domain.Principal, error) {
	now := c.clock.Now()
	c.mu.RLock()
	e, ok := c.entries[subject]
	c.mu.RUnlock()
	if ok && now.Before(e.expires) {
		return e.p, nil
	}
	p, err := c.UserLookup.BySubject(ctx, subject)
	if err != nil {
		return p, err
	}
	c.mu.Lock()
	if len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[subject] = cachedPrincipal{p: p, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return p, nil
}

// evict drops every expired entry and, when that is not enough, arbitrary
// ones until the cache is half full. The caller holds the lock.
func (c *SubjectCache) evict(now time.Time) {
	for k, v := range c.entries {
		if !now.Before(v.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) <= c.max/2 {
			return
		}
		delete(c.entries, k)
	}
}
