package readcache

import "sync"

// Cache holds values read from the file, each valid only for readers whose
// stamp has the state it was read in; a reader with a stamp of another
// state misses. The first value put in a newer state than the cache's
// empties it. It holds at most MaxBytes by its size function; a value
// larger than a sixty-fourth of that is not kept.
type Cache[V any] struct {
	size     func(V) int
	maxBytes int

	mu    sync.RWMutex
	state state
	seq   uint64
	m     map[string]V
	bytes int
}

// New returns an empty cache of at most maxBytes, measured by size.
func New[V any](maxBytes int, size func(V) int) *Cache[V] {
	return &Cache[V]{size: size, maxBytes: maxBytes, m: map[string]V{}}
}

// Get returns the value of key kept in s's state.
func (c *Cache[V]) Get(s Stamp, key string) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.state != s.State || c.seq == 0 {
		var zero V
		return zero, false
	}
	v, ok := c.m[key]
	return v, ok
}

// Put keeps v for key, read after the stamp s was taken: v is what the
// file held in s's state or in a later one, which a reader that sees s's
// state after v was put may be answered, as whatever changed it was
// committed by then. A stamp older than the cache's state is ignored.
func (c *Cache[V]) Put(s Stamp, key string, v V) {
	n := c.size(v) + len(key)
	if n > c.maxBytes/64 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.state == s.State && c.seq != 0:
		c.seq = max(c.seq, s.Seq)
	case s.Seq > c.seq:
		c.state, c.seq = s.State, s.Seq
		clear(c.m)
		c.bytes = 0
	default:
		return
	}
	if old, ok := c.m[key]; ok {
		c.bytes -= c.size(old) + len(key)
		delete(c.m, key)
	}
	for k, old := range c.m {
		if c.bytes+n <= c.maxBytes {
			break
		}
		c.bytes -= c.size(old) + len(k)
		delete(c.m, k)
	}
	c.m[key] = v
	c.bytes += n
}
