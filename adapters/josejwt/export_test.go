package josejwt

import "context"

// CacheLen returns how many verified access tokens t caches.
func CacheLen(t *Tokens) int {
	if t.cache == nil {
		return 0
	}
	return t.cache.len()
}

// Poll runs one look of KeepLoaded's at t's clock's now.
func Poll(ctx context.Context, t *Tokens) { t.poll(ctx, t.opts.Clock.Now()) }
