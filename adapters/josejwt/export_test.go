package josejwt

// CacheLen returns how many verified access tokens t caches.
func CacheLen(t *Tokens) int {
	if t.cache == nil {
		return 0
	}
	return t.cache.len()
}
